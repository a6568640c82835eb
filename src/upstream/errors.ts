import { describeUpstreamCode } from './codes.js';
import type { UpstreamEndpoint } from './endpoints.js';
import { classifyFailure } from './retry-policy.js';

/**
 * Stable kinds of provider-client failure; callers branch on these (and on `upstreamCode`),
 * never on messages.
 * - provider: the provider answered with an error envelope; `upstreamCode` says which.
 * - timeout: connect, response-headers or body timeout.
 * - network: connection refused/reset/closed, DNS, TLS, proxy tunnel failure.
 * - malformed: an answer we cannot trust (not JSON, wrong shape, HTML error page, too large).
 * - invalid_request: our own input was rejected before anything was sent.
 */
export const UPSTREAM_ERROR_KINDS = ['provider', 'timeout', 'network', 'malformed', 'invalid_request'] as const;
export type UpstreamErrorKind = (typeof UPSTREAM_ERROR_KINDS)[number];

export interface UpstreamErrorInit {
  kind: UpstreamErrorKind;
  endpoint: UpstreamEndpoint;
  /** Short, secret-free detail (e.g. "data[0].card_code: invalid_type"). */
  detail?: string;
  upstreamCode?: number;
  httpStatus?: number;
  /**
   * False only when the request provably never left this process (our validation, connect
   * failure). Anything else is treated as "the provider may have received it".
   */
  requestSent: boolean;
  /** The provider's `error` text, trimmed; kept apart from `message` because its wording is unstable. */
  providerMessage?: string;
  cause?: unknown;
}

/**
 * The one error type of the provider client. Its message is built only from our own words, the
 * endpoint name, the numeric code and an error code such as ECONNRESET: never the private key, a
 * token, card codes or a response body.
 */
export class UpstreamError extends Error {
  readonly kind: UpstreamErrorKind;
  readonly endpoint: UpstreamEndpoint;
  readonly upstreamCode: number | undefined;
  readonly httpStatus: number | undefined;
  readonly requestSent: boolean;
  /**
   * The caller may repeat this exact call: doing so cannot duplicate a provider-side effect and
   * the failure may be transient. False for permanent errors and for writes whose outcome is unknown.
   */
  readonly retrySafe: boolean;
  /**
   * initiate/confirm only: the provider may have committed the call (reserved cards or issued
   * codes) even though we have no usable answer. The caller must reconcile, not blindly repeat.
   */
  readonly outcomeUnknown: boolean;
  readonly providerMessage: string | undefined;

  constructor(init: UpstreamErrorInit) {
    super(buildMessage(init), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'UpstreamError';
    this.kind = init.kind;
    this.endpoint = init.endpoint;
    this.upstreamCode = init.upstreamCode;
    this.httpStatus = init.httpStatus;
    this.requestSent = init.requestSent;
    this.providerMessage = init.providerMessage?.slice(0, 200);
    const policy = classifyFailure(init);
    this.retrySafe = policy.retrySafe;
    this.outcomeUnknown = policy.outcomeUnknown;
  }
}

function buildMessage(init: UpstreamErrorInit): string {
  const what =
    init.kind === 'provider' && init.upstreamCode !== undefined
      ? `provider error ${init.upstreamCode} (${describeUpstreamCode(init.upstreamCode)})`
      : init.kind.replace('_', ' ');
  const status = init.httpStatus === undefined ? '' : ` [HTTP ${init.httpStatus}]`;
  const detail = init.detail ? `: ${init.detail}` : '';
  return `${init.endpoint}: ${what}${status}${detail}`;
}

export function isUpstreamError(value: unknown): value is UpstreamError {
  return value instanceof UpstreamError;
}
