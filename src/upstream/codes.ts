/**
 * The provider's result codes (upstream-api.md §7). Codes, never the `error` text, are the stable
 * identifiers: the spec warns the wording may change between versions.
 */
export const SUCCESS_CODE = 11111;

export const UPSTREAM_CODES = {
  /** Token missing, malformed, invalid or expired: the call was rejected before any processing. */
  incorrectToken: 10000,
  /** Server-side failure; the spec advises retrying with back-off. */
  processingError: 10001,
  /** card_id / vendor_id matches nothing in the merchant's catalog (ids are case-sensitive). */
  noCardData: 10002,
  /** Wrong HTTP method for the endpoint: a bug on our side, never transient. */
  improperMethod: 10003,
  /** card_id absent from the body. */
  cardIdMissing: 10005,
  /** Not enough stock (or, per the error reference, not enough merchant account balance). */
  insufficientBalance: 10006,
  usernameMissing: 10007,
  passwordMissing: 10008,
} as const;

export type KnownUpstreamCode = (typeof UPSTREAM_CODES)[keyof typeof UPSTREAM_CODES];

/** Our own descriptions, used in error messages instead of the provider's free text. */
const DESCRIPTIONS: Record<KnownUpstreamCode, string> = {
  10000: 'incorrect token access',
  10001: 'error while processing the request',
  10002: 'no card data found',
  10003: 'improper way for calling API (method)',
  10005: 'card id missing',
  10006: 'insufficient balance',
  10007: 'username missing',
  10008: 'password missing',
};

export function isKnownUpstreamCode(code: number): code is KnownUpstreamCode {
  return Object.hasOwn(DESCRIPTIONS, code);
}

export function describeUpstreamCode(code: number): string {
  return isKnownUpstreamCode(code) ? DESCRIPTIONS[code] : 'undocumented provider code';
}
