/**
 * One application error type with a stable snake_case code. Clients branch on `code`, never on
 * the message; `ERROR_STATUS` is the single table from code to HTTP status (a test checks that
 * every code is mapped). Messages of 5xx errors are never shown to clients.
 */
export const ERROR_STATUS = {
  // 400
  validation_failed: 400,
  bad_request: 400,
  invalid_json: 400,
  // 401 / 403
  unauthorized: 401,
  forbidden: 403,
  // 404
  not_found: 404,
  route_not_found: 404,
  card_not_found: 404,
  order_not_found: 404,
  vendor_not_found: 404,
  webhook_event_not_found: 404,
  // 405, 406
  method_not_allowed: 405,
  not_acceptable: 406,
  // 409
  conflict: 409,
  price_changed: 409,
  card_unavailable: 409,
  order_not_actionable: 409,
  confirmation_required: 409,
  // 413, 415
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  // 422
  idempotency_key_reused: 422,
  // 429
  rate_limited: 429,
  // 5xx
  internal_error: 500,
  upstream_unavailable: 502,
  service_unavailable: 503,
  upstream_timeout: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export interface AppErrorOptions {
  /** Extra members for the problem details body; must never contain secrets. */
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Headers to set on the response (e.g. Retry-After). */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers;
  }
}
