import { describeUpstreamCode } from './codes.js';
import { ENDPOINTS, type UpstreamEndpoint } from './endpoints.js';
import { classifyFailure } from './retry-policy.js';
import { hasSalvage, type Salvage } from './salvage.js';

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
  /** initiate/confirm: what the refused answer still carried (see salvage.ts). Empty values are dropped. */
  salvage?: Salvage;
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
  /**
   * The provider's free `error` text (≤ 200 chars). Non-enumerable: pino's error serializer and
   * JSON.stringify skip it, because a provider that echoes a token or credentials in its text
   * would otherwise put them in logs. Readable as a normal property.
   */
  declare readonly providerMessage: string | undefined;
  /**
   * initiate/confirm only: the transaction_id and/or card codes found in an answer that could not
   * be accepted as a success. Non-enumerable (card codes must never reach logs); read it with
   * `salvageOf(err)` and persist it. Its presence makes the outcome unknown.
   */
  declare readonly salvage: Salvage | undefined;

  constructor(init: UpstreamErrorInit) {
    super(buildMessage(init), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'UpstreamError';
    this.kind = init.kind;
    this.endpoint = init.endpoint;
    this.upstreamCode = init.upstreamCode;
    this.httpStatus = init.httpStatus;
    this.requestSent = init.requestSent;
    // Only writes have anything worth salvaging (a reservation, issued codes); empty values are dropped.
    const salvage = ENDPOINTS[init.endpoint].writes && hasSalvage(init.salvage) ? init.salvage : undefined;
    const providerMessage = init.providerMessage?.trim().slice(0, 200);
    Object.defineProperty(this, 'providerMessage', { value: providerMessage === '' ? undefined : providerMessage, enumerable: false });
    Object.defineProperty(this, 'salvage', { value: salvage, enumerable: false });
    const policy = classifyFailure({ ...init, salvage });
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

/**
 * The transaction_id / card codes a failed initiate or confirm still carried, if any. The caller
 * must persist them (encrypted, for codes) before deciding anything else about the order.
 */
export function salvageOf(error: unknown): Salvage | undefined {
  return error instanceof UpstreamError ? error.salvage : undefined;
}
