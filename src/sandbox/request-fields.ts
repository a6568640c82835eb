/**
 * Pure readers of provider request fields. The spec types ids inconsistently (vendor_id is an
 * integer in the guide and a string in the reference; card_id is an integer in requests and a
 * string in the catalog), so ids are matched on their exact string form: 101 and "101" are the
 * same card, "V-1" and "v-1" are different vendors, " 101" and "101.0" match nothing.
 */

export type IdField = { kind: 'missing' } | { kind: 'value'; id: string } | { kind: 'invalid' };

/** Absent or null counts as missing (10005); any other non string/integer value matches nothing. */
export function readId(body: Record<string, unknown>, key: string): IdField {
  const value = body[key];
  if (value === undefined || value === null) return { kind: 'missing' };
  if (typeof value === 'string') return { kind: 'value', id: value };
  if (typeof value === 'number' && Number.isSafeInteger(value)) return { kind: 'value', id: String(value) };
  return { kind: 'invalid' };
}

/** A positive whole number given as a JSON integer or a string of digits; undefined otherwise. */
export function readPositiveInteger(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  if (typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value)) return Number(value);
  return undefined;
}

/** A whole number ≥ 0 (transaction_number may legitimately be 0 in a merchant's numbering). */
export function readNonNegativeInteger(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^(0|[1-9]\d{0,14})$/.test(value)) return Number(value);
  return undefined;
}

export function readNonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The balance answer echoes card_id as an integer (section 2) when the id is numeric. */
export function echoCardId(cardId: string): number | string {
  return /^(0|[1-9]\d{0,14})$/.test(cardId) ? Number(cardId) : cardId;
}
