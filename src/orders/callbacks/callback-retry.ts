/**
 * Retry policy for storefront callbacks: exponential back-off with jitter, capped, so a
 * storefront that is down for a while is not hammered and many deliveries that failed together
 * do not all retry at the same instant. With the defaults, 12 attempts span about five hours.
 */

export const DEFAULT_MAX_ATTEMPTS = 12;

export interface CallbackBackoff {
  /** Delay before the second attempt; doubles each time. */
  baseDelayMs: number;
  /** No delay exceeds this. */
  maxDelayMs: number;
  /** Fraction of the delay that is random: 0.2 means 80–100 % of it. */
  jitter: number;
}

export const DEFAULT_BACKOFF: CallbackBackoff = { baseDelayMs: 30_000, maxDelayMs: 3_600_000, jitter: 0.2 };

/** Delay after failed attempt number `attempt` (1 = the first attempt failed). */
export function callbackRetryDelay(attempt: number, backoff: CallbackBackoff = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempt - 1);
  const full = Math.min(backoff.maxDelayMs, backoff.baseDelayMs * 2 ** Math.min(exponent, 30));
  return Math.round(full * (1 - backoff.jitter * random()));
}

/** Whether the attempt that just failed was the last one allowed. */
export function isLastCallbackAttempt(attemptsIncludingThis: number, maxAttempts: number): boolean {
  return attemptsIncludingThis >= maxAttempts;
}
