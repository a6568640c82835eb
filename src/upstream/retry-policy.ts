import { UPSTREAM_CODES } from './codes.js';
import { ENDPOINTS, type UpstreamEndpoint } from './endpoints.js';
import type { UpstreamErrorKind } from './errors.js';
import { hasSalvage, type Salvage } from './salvage.js';

/** What is known about one failed attempt: enough to decide, nothing secret. */
export interface FailureFacts {
  endpoint: UpstreamEndpoint;
  kind: UpstreamErrorKind;
  upstreamCode?: number;
  httpStatus?: number;
  requestSent: boolean;
  /** A refused write answer that still carried a transaction_id or card codes. */
  salvage?: Salvage | undefined;
}

export interface FailureClassification {
  /** The client itself repeats the call after a back-off (only ever for calls with no effect). */
  retryInClient: boolean;
  /** Log in again once and repeat once (10000). */
  reauthenticate: boolean;
  /** See UpstreamError.retrySafe. */
  retrySafe: boolean;
  /** See UpstreamError.outcomeUnknown. */
  outcomeUnknown: boolean;
}

/**
 * Codes after which the same request can never succeed: repeating only adds load. 10006 is
 * "insufficient stock/balance", which might change later, but that is a business decision for the
 * pipeline (re-check the balance), not a transport retry.
 */
const PERMANENT_CODES: ReadonlySet<number> = new Set([
  UPSTREAM_CODES.noCardData,
  UPSTREAM_CODES.improperMethod,
  UPSTREAM_CODES.cardIdMissing,
  UPSTREAM_CODES.insufficientBalance,
  UPSTREAM_CODES.usernameMissing,
  UPSTREAM_CODES.passwordMissing,
]);

/**
 * The whole retry policy, as one pure function (the table is in docs/upstream-client.md).
 *
 * Reads (login, catalog, balance) have no provider-side effect, so every transient failure is
 * retried here. Writes (initiate, confirm) are never repeated by the client: a timeout, a lost
 * connection, an unreadable answer or a 10001 after the request left may each hide a committed
 * reservation or issued codes, and only the purchase pipeline (which owns the order record) may
 * decide what to do. The one exception is 10000, which by definition is the token check failing
 * before the provider does anything, so logging in again and repeating once is safe even for writes.
 */
export function classifyFailure(facts: FailureFacts): FailureClassification {
  const writes = ENDPOINTS[facts.endpoint].writes;
  const none = { retryInClient: false, reauthenticate: false, retrySafe: false, outcomeUnknown: false };

  // An answer that names a transaction or carries card codes is evidence that the provider may
  // have committed something, whatever its code says (even 10000 or 10006): never repeat it, not
  // even after a re-login, and let the pipeline reconcile with what was salvaged.
  if (writes && facts.kind !== 'invalid_request' && hasSalvage(facts.salvage)) return { ...none, outcomeUnknown: true };

  switch (facts.kind) {
    case 'invalid_request':
      // Nothing left the process, and the same input would be rejected again.
      return none;

    case 'provider': {
      const code = facts.upstreamCode;
      if (code === UPSTREAM_CODES.incorrectToken) {
        // On login itself 10000 cannot be a stale token (none was sent): it is the provider
        // refusing us (an unregistered egress IP, say), which repeating will not fix.
        if (!ENDPOINTS[facts.endpoint].authenticated) return none;
        return { ...none, reauthenticate: true, retrySafe: true };
      }
      if (code !== undefined && PERMANENT_CODES.has(code)) return none;
      if (code === UPSTREAM_CODES.processingError) {
        // The spec calls 10001 a server-side failure and advises retrying, but does not promise that
        // nothing was committed first (a failure while building the answer would look the same).
        // For a write that is an unknown outcome; for a read it is just a retry.
        return writes ? { ...none, outcomeUnknown: true } : { ...none, retryInClient: true, retrySafe: true };
      }
      // An undocumented code: we cannot know its meaning, so never repeat it, and on a write we
      // cannot rule out that the provider committed.
      return { ...none, outcomeUnknown: writes };
    }

    case 'timeout':
    case 'network':
      if (!facts.requestSent) {
        // Connect failure: the provider never saw the request, so repeating is safe for any call.
        return { ...none, retryInClient: !writes, retrySafe: true };
      }
      return writes ? { ...none, outcomeUnknown: true } : { ...none, retryInClient: true, retrySafe: true };

    case 'malformed': {
      if (writes) return { ...none, outcomeUnknown: true };
      // A 5xx/429 page from a proxy or load balancer is usually transient; a 2xx with the wrong
      // shape will not fix itself, so repeating it only adds load.
      const transient = facts.httpStatus === undefined || facts.httpStatus >= 500 || facts.httpStatus === 429;
      return { ...none, retryInClient: transient, retrySafe: transient };
    }
  }
}

export interface BackoffSettings {
  baseDelayMs: number;
  maxDelayMs: number;
  /** 'full': uniform in [0, cap) (AWS "full jitter"), which spreads a herd of retries; 'none': cap. */
  jitter: 'full' | 'none';
}

/** Delay before retry number `retry` (1 = first retry): min(max, base·2^(retry-1)), jittered. */
export function backoffDelayMs(retry: number, settings: BackoffSettings, random: () => number = Math.random): number {
  const exponential = settings.baseDelayMs * 2 ** Math.max(0, retry - 1);
  const cap = Math.min(settings.maxDelayMs, exponential);
  return settings.jitter === 'full' ? Math.floor(random() * cap) : cap;
}

/** Whether attempt number `attempt` (1-based) that failed this way is followed by another. */
export function shouldRetry(policy: FailureClassification, attempt: number, maxAttempts: number): boolean {
  return policy.retryInClient && attempt < maxAttempts;
}
