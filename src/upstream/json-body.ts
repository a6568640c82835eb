/**
 * Request-body encoding. Bodies are written by hand rather than with JSON.stringify so that a
 * number's text is exactly what we decided (a money amount never passes through a binary double
 * on our side, and large integers keep every digit).
 */

/** A JSON number literal whose text has already been validated. */
export class JsonNumber {
  private constructor(readonly text: string) {}
  /** @internal only the validating functions below may build one. */
  static unsafe(text: string): JsonNumber {
    return new JsonNumber(text);
  }
}

export type BodyValue = string | JsonNumber;

export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
}

export function encodeJsonBody(fields: Record<string, BodyValue>): string {
  const members = Object.entries(fields).map(
    ([key, value]) => `${JSON.stringify(key)}:${value instanceof JsonNumber ? value.text : JSON.stringify(value)}`,
  );
  return `{${members.join(',')}}`;
}

const PLAIN_DECIMAL = /^\d+(?:\.\d+)?$/;
const CANONICAL_INTEGER = /^(?:0|[1-9]\d*)$/;
/** A double round-trips any decimal of up to 15 significant digits (DBL_DIG). */
const MAX_FLOAT_SIGNIFICANT_DIGITS = 15;

/**
 * `total_amount` is a JSON float in the spec. The caller computes it exactly as a decimal string;
 * we emit that decimal in canonical form ("0.30" → 0.3, "15.00" → 15) as the number's text.
 * Only plain decimal notation is accepted: signs, exponents, hex, "Infinity" and "NaN" are rejected,
 * and so are values with more significant digits than the provider's double can hold, because the
 * provider would then confirm a different amount from the one we computed.
 */
export function decimalAmount(amount: string, field: string): JsonNumber {
  if (typeof amount !== 'string' || !PLAIN_DECIMAL.test(amount)) {
    const negative = typeof amount === 'string' && /^-\d/.test(amount);
    throw new InvalidInputError(
      negative ? `${field} must not be negative` : `${field} must be a plain non-negative decimal string`,
    );
  }
  // Plain string work on the digits: no step converts the amount to a binary number.
  const [whole = '', fraction = ''] = amount.split('.');
  const intPart = whole.replace(/^0+(?=\d)/, '');
  const fracPart = fraction.replace(/0+$/, '');
  const significant = `${intPart}${fracPart}`.replace(/^0+/, '').replace(/0+$/, '');
  if (significant.length > MAX_FLOAT_SIGNIFICANT_DIGITS) {
    throw new InvalidInputError(`${field} has more significant digits than a JSON float can carry exactly`);
  }
  return JsonNumber.unsafe(fracPart ? `${intPart}.${fracPart}` : intPart);
}

/**
 * Catalog ids (vendor_id, card_id) arrive as case-sensitive strings, but request bodies declare
 * card_id an integer and vendor_id "integer in the guide, string in the endpoint reference".
 * A canonical non-negative integer within the safe range is sent as a JSON number (satisfies an
 * integer-typed field and any server that compares loosely); anything else — leading zeros,
 * letters, very large values — is sent as the exact string, because rewriting it ("007" → 7)
 * would change a case-/format-sensitive identifier.
 */
export function catalogId(id: string, field: string): BodyValue {
  if (typeof id !== 'string' || id.length === 0) throw new InvalidInputError(`${field} must be a non-empty string`);
  return isSafeCanonicalInteger(id) ? JsonNumber.unsafe(id) : id;
}

/** A field the spec types as integer, with no string fallback (quantity, transaction_number). */
export function integerField(value: number | string, field: string, min: number): JsonNumber {
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : '') : value;
  if (typeof text !== 'string' || !isSafeCanonicalInteger(text) || Number(text) < min) {
    throw new InvalidInputError(`${field} must be an integer ≥ ${min} within the safe integer range`);
  }
  return JsonNumber.unsafe(text);
}

export function nonEmptyString(value: string, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidInputError(`${field} must be a non-empty string`);
  return value;
}

function isSafeCanonicalInteger(text: string): boolean {
  return CANONICAL_INTEGER.test(text) && Number.isSafeInteger(Number(text));
}
