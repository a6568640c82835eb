/**
 * The purchase pipeline's retry policy, in one place: how often each step may be tried and how
 * long to wait between tries. The state machine (order-state.ts) applies it; nothing else
 * decides. See the README's "Purchase pipeline" for the table and the reasons.
 */
export interface OrderPolicy {
  maxBalanceChecks: number;
  maxInitiateAttempts: number;
  maxConfirmAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  busyRecheckMs: number;
}

export const ORDER_POLICY: Readonly<OrderPolicy> = {
  /** Balance checks that failed transiently (10001, timeouts) before the order fails; nothing is reserved yet. */
  maxBalanceChecks: 5,
  /** Initiations that provably never reached the provider (not sent, or rejected with 10000) before the order fails. */
  maxInitiateAttempts: 3,
  /** Confirmations with the same transaction_id before the order needs attention. */
  maxConfirmAttempts: 4,
  /** Back-off between tries: base × 2^(n-1), capped, with full jitter applied by the driver. */
  retryBaseMs: 2_000,
  retryMaxMs: 30_000,
  /** How often an order held by provider busy mode looks again (busy mode's `until` may shorten it). */
  busyRecheckMs: 15_000,
};

/** Delay before try number `attempt + 1` (attempt ≥ 1), before jitter. */
export function retryDelayMs(attempt: number, policy: Pick<OrderPolicy, 'retryBaseMs' | 'retryMaxMs'> = ORDER_POLICY): number {
  return Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** Math.max(0, attempt - 1));
}
