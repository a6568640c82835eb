import type { IssuedCard } from './types.js';

/**
 * What a write answer (initiate/confirm) that could not be accepted as a success still told us.
 *
 * Losing a `transaction_id` strands the reserved cards (upstream-api.md §3 rule 2) and card codes
 * are paid for and cannot be fetched again, so whenever such an answer is refused (provider error
 * code, wrong shape, status/code nonsense, broken JSON) the client still digs out whatever it can
 * and hands it to the pipeline on the error (`UpstreamError.salvage`, non-enumerable so loggers
 * and JSON.stringify never emit card codes). The pipeline persists it and decides.
 */
export interface Salvage {
  /** A usable transaction_id found at the top level or under `data`. */
  transactionId?: string;
  /**
   * Every entry with a usable card_code (a string with a non-blank character, or an integer
   * literal, kept digit-exact). `cardNumber` is '' when the entry had none usable.
   */
  cards?: IssuedCard[];
}

/** Keys whose integer literals are turned into strings before JSON.parse (see below). */
const IDENTIFIER_KEYS = ['transaction_id', 'card_code', 'card_number'];
const INTEGER_LITERAL_MEMBER = new RegExp(`("(?:${IDENTIFIER_KEYS.join('|')})"\\s*:\\s*)(0|[1-9]\\d*)(?=\\s*[,}\\]])`, 'g');

/**
 * The spec types transaction_id, card_code and card_number as strings, but a provider that sends
 * them as JSON numbers may well send 16-20 digit values, which JSON.parse would silently round to
 * another id or another card code. Integer literals of these keys are therefore quoted in the raw
 * text before parsing, so their digits survive exactly.
 *
 * Safe on any JSON text: inside a JSON string a `"` is always escaped, so `"card_code":` can only
 * match a real member name; only canonical integer literals (no sign, no leading zero, no fraction
 * or exponent) are touched, so text that was not valid JSON does not become valid.
 */
export function quoteIdentifierLiterals(text: string): string {
  return text.replace(INTEGER_LITERAL_MEMBER, '$1"$2"');
}

/**
 * An identifier value: a string with at least one non-blank character (kept exactly as sent:
 * identifiers may be case- and format-sensitive), or a safe non-negative integer.
 */
export function usableIdentifier(value: unknown): string | undefined {
  if (typeof value === 'string') return /\S/.test(value) ? value : undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Entries under `data`: an array, or a single object. */
function dataEntries(json: Record<string, unknown>): unknown[] {
  const { data } = json;
  if (Array.isArray(data)) return data;
  return isRecord(data) ? [data] : [];
}

/** Salvage from a parsed answer; undefined when there is nothing to keep. */
export function salvageFromJson(json: unknown): Salvage | undefined {
  if (!isRecord(json)) return undefined;
  const entries = dataEntries(json);

  let transactionId = usableIdentifier(json.transaction_id);
  for (const entry of entries) {
    if (transactionId !== undefined) break;
    if (isRecord(entry)) transactionId = usableIdentifier(entry.transaction_id);
  }

  const cards: IssuedCard[] = [];
  for (const entry of entries) {
    if (!isRecord(entry)) continue;
    const cardCode = usableIdentifier(entry.card_code);
    if (cardCode === undefined) continue;
    cards.push({ cardCode, cardNumber: usableIdentifier(entry.card_number) ?? '' });
  }

  return makeSalvage(transactionId, cards);
}

const TRANSACTION_ID_IN_TEXT = /"transaction_id"\s*:\s*(?:"((?:[^"\\]|\\.){1,500})"|(0|[1-9]\d*)(?=\s*[,}\]]))/g;

/**
 * Salvage from text that is not valid JSON (a truncated or otherwise broken answer): only a
 * transaction_id, and only when the text names exactly one. Card codes are not dug out of broken
 * text: a truncated entry could yield a cut-off code that looks valid.
 */
export function salvageFromText(text: string): Salvage | undefined {
  const found = new Set<string>();
  for (const match of text.matchAll(TRANSACTION_ID_IN_TEXT)) {
    const value = match[2] ?? unescapeJsonString(match[1]);
    const id = usableIdentifier(value);
    if (id !== undefined) found.add(id);
  }
  if (found.size !== 1) return undefined;
  return makeSalvage([...found][0], []);
}

function unescapeJsonString(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

function makeSalvage(transactionId: string | undefined, cards: IssuedCard[]): Salvage | undefined {
  if (transactionId === undefined && cards.length === 0) return undefined;
  const salvage: Salvage = {};
  if (transactionId !== undefined) salvage.transactionId = transactionId;
  if (cards.length > 0) salvage.cards = cards;
  return salvage;
}

/** Whether a salvage value holds anything. */
export function hasSalvage(salvage: Salvage | undefined): salvage is Salvage {
  return salvage !== undefined && (salvage.transactionId !== undefined || (salvage.cards?.length ?? 0) > 0);
}
