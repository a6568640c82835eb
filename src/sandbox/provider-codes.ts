/**
 * The provider's answer envelope and error codes (upstream-api.md sections 2 and 7). Success
 * carries `code: "11111"` as a STRING while errors carry a NUMBER: the asymmetry is the spec's
 * and is reproduced on purpose so clients cannot compare codes by strict equality of one type.
 */

export const SUCCESS_CODE = '11111';

export const PROVIDER_ERRORS = {
  10000: 'Incorrect Token Access',
  10001: 'Error while Processing the request',
  10002: 'No Card Data Found',
  10003: 'Improper Way for Calling API - Method',
  10005: 'Card ID Missing',
  10006: 'Insufficient Balance',
  10007: 'Username missing',
  10008: 'Password missing',
} as const;

export type ProviderErrorCode = keyof typeof PROVIDER_ERRORS;

export const PROVIDER_ERROR_CODES = Object.keys(PROVIDER_ERRORS).map(Number) as ProviderErrorCode[];

/**
 * HTTP statuses used when `errorHttpStatus: 'mapped'`. The spec shows none, so the default is 200
 * for every error (clients must branch on `code`); this table is for exercising clients that must
 * also survive a provider answering errors with 4xx/5xx and a JSON body.
 */
export const MAPPED_HTTP_STATUS: Record<ProviderErrorCode, number> = {
  10000: 401,
  10001: 500,
  10002: 404,
  10003: 405,
  10005: 400,
  10006: 409,
  10007: 400,
  10008: 400,
};

/** Thrown by the sandbox's order and auth logic; the routes turn it into an error envelope. */
export class ProviderError extends Error {
  constructor(
    readonly code: ProviderErrorCode,
    /** Extra detail for the `error` text; never secrets. */
    readonly detail?: string,
  ) {
    super(detail ? `${PROVIDER_ERRORS[code]}: ${detail}` : PROVIDER_ERRORS[code]);
    this.name = 'ProviderError';
  }
}

export interface ErrorEnvelope {
  status: false;
  code: ProviderErrorCode;
  error: string;
}

export function errorEnvelope(code: ProviderErrorCode, detail?: string): ErrorEnvelope {
  return { status: false, code, error: detail ? `${PROVIDER_ERRORS[code]}: ${detail}` : PROVIDER_ERRORS[code] };
}

export function successEnvelope<T extends Record<string, unknown>>(fields: T): { status: true; code: typeof SUCCESS_CODE } & T {
  return { status: true, code: SUCCESS_CODE, ...fields };
}

export function errorHttpStatus(code: ProviderErrorCode, mode: 200 | 'mapped'): number {
  return mode === 'mapped' ? MAPPED_HTTP_STATUS[code] : 200;
}
