import { ORDER_POLICY, retryDelayMs, type OrderPolicy } from './order-policy.js';

/**
 * The order state machine: pure functions from (order, what the provider answered) to what
 * happens next. No I/O here; the pipeline driver (pipeline.ts) performs the calls and commits
 * each decision with a compare-and-set. Crash windows and their policies are described where
 * each decision is made.
 *
 *   queued ──balance ok──▶ reserving ──initiate ok──▶ reserved ──▶ confirming ──cards──▶ fulfilled
 *     │                       │                                       │
 *     └─▶ failed (nothing     └─▶ failed | queued (never reached)     └─▶ needs_attention
 *         reserved)           └─▶ needs_attention (outcome unknown)       (outcome unknown / refused)
 */

export const ORDER_STATUSES = ['queued', 'reserving', 'reserved', 'confirming', 'fulfilled', 'failed', 'needs_attention'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const TERMINAL_STATUSES: readonly OrderStatus[] = ['fulfilled', 'failed', 'needs_attention'];

export function isTerminal(status: OrderStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** What the state machine needs to know about an order. */
export interface OrderFacts {
  status: OrderStatus;
  quantity: number;
  transactionId: string | null;
  balanceChecks: number;
  initiateAttempts: number;
  confirmAttempts: number;
}

/** A provider failure, as the client classified it (src/upstream/errors.ts). */
export interface CallFailure {
  kind: 'provider' | 'timeout' | 'network' | 'malformed' | 'invalid_request';
  upstreamCode: number | undefined;
  /** Repeating the same call cannot duplicate a provider-side effect. */
  retrySafe: boolean;
  /** initiate/confirm: the provider may have committed it. */
  outcomeUnknown: boolean;
  /** False only when the request provably never left the process. */
  requestSent: boolean;
  /** A transaction_id found in an answer we could not accept. */
  salvagedTransactionId?: string | undefined;
  /** Cards found in an answer we could not accept. */
  salvagedCards?: number | undefined;
}

export type CallOutcome<T> = { ok: true; value: T } | { ok: false; failure: CallFailure };

export interface Failure {
  /** Stable snake_case code for storefronts. */
  code: string;
  message: string;
  upstreamCode?: number | undefined;
}

/** The next thing the driver must do for an order, given its stored state. */
export type Step =
  | { kind: 'check_balance' }
  | { kind: 'hold_busy' }
  | { kind: 'confirm' }
  | { kind: 'escalate'; detail: string }
  | { kind: 'done' };

/** A decision: the status to commit (with counters and references), or to try again later. */
export type Decision =
  | { kind: 'transition'; to: OrderStatus; detail?: string; failure?: Failure; transactionId?: string }
  | { kind: 'retry'; delayMs: number; detail: string };

export function nextStep(order: OrderFacts, busy: boolean, policy: OrderPolicy = ORDER_POLICY): Step {
  switch (order.status) {
    case 'queued':
      return busy ? { kind: 'hold_busy' } : { kind: 'check_balance' };
    case 'reserving':
      // Found at the start of a run: an earlier run committed "reserving" and may or may not
      // have sent initiate-card-request, which may or may not have reserved cards. The provider
      // offers no lookup by transaction_number, and a second initiate could reserve twice, so
      // support must settle it (a provider webhook may settle it later, with the transaction_id).
      return { kind: 'escalate', detail: 'initiate_outcome_unknown: the gateway stopped while initiate-card-request was in flight; ask the provider about this transaction_number' };
    case 'reserved':
      return { kind: 'confirm' };
    case 'confirming':
      // Found at the start of a run: a confirm may have been sent. Repeating it with the same
      // transaction_id is the documented recovery (it cannot reserve again); bounded.
      return order.confirmAttempts < policy.maxConfirmAttempts
        ? { kind: 'confirm' }
        : { kind: 'escalate', detail: `confirm_outcome_unknown: no usable answer after ${order.confirmAttempts} confirm attempts with this transaction_id` };
    default:
      return { kind: 'done' };
  }
}

const describe = (f: CallFailure): string => (f.kind === 'provider' ? `provider error ${String(f.upstreamCode)}` : f.kind);

/** After get-balance-details (status queued; nothing reserved yet, so failing is always safe). */
export function afterBalance(order: OrderFacts, outcome: CallOutcome<number>, policy: OrderPolicy = ORDER_POLICY): Decision {
  if (outcome.ok) {
    if (outcome.value >= order.quantity) return { kind: 'transition', to: 'reserving' };
    return {
      kind: 'transition',
      to: 'failed',
      failure: { code: 'out_of_stock', message: `The provider has ${outcome.value} in stock; the order needs ${order.quantity}. Nothing was reserved.` },
    };
  }
  const f = outcome.failure;
  if (f.kind === 'provider' && (f.upstreamCode === 10002 || f.upstreamCode === 10005)) {
    return {
      kind: 'transition',
      to: 'failed',
      failure: { code: 'card_unavailable', message: 'The provider does not offer this card to the merchant (any more). Nothing was reserved.', upstreamCode: f.upstreamCode },
    };
  }
  const checks = order.balanceChecks + 1;
  if (f.retrySafe && checks < policy.maxBalanceChecks) {
    return { kind: 'retry', delayMs: retryDelayMs(checks, policy), detail: `balance check failed (${describe(f)}); trying again` };
  }
  return {
    kind: 'transition',
    to: 'failed',
    failure: { code: 'provider_unavailable', message: `The provider could not confirm stock (${describe(f)}) after ${checks} checks. Nothing was reserved.`, upstreamCode: f.upstreamCode },
  };
}

/** After initiate-card-request (status reserving, committed before the call was sent). */
export function afterInitiate(order: OrderFacts, outcome: CallOutcome<string>, policy: OrderPolicy = ORDER_POLICY): Decision {
  if (outcome.ok) return { kind: 'transition', to: 'reserved', transactionId: outcome.value };
  const f = outcome.failure;
  if (f.kind === 'provider' && f.upstreamCode === 10006) {
    // "No card codes are generated": the spec says the request reserved nothing.
    return {
      kind: 'transition',
      to: 'failed',
      failure: { code: 'insufficient_balance', message: 'The provider refused: not enough stock, or the merchant account balance is too low. Nothing was reserved.', upstreamCode: 10006 },
    };
  }
  if (f.kind === 'provider' && (f.upstreamCode === 10002 || f.upstreamCode === 10005)) {
    return {
      kind: 'transition',
      to: 'failed',
      failure: { code: 'card_unavailable', message: 'The provider does not offer this card to the merchant. Nothing was reserved.', upstreamCode: f.upstreamCode },
    };
  }
  if (f.salvagedTransactionId !== undefined) {
    // The answer was unusable but named a transaction: keep it, let support decide.
    return {
      kind: 'transition',
      to: 'needs_attention',
      transactionId: f.salvagedTransactionId,
      detail: `initiate_answer_unusable: the provider's answer (${describe(f)}) named this transaction_id; check the reservation before confirming`,
    };
  }
  if (!f.outcomeUnknown && !f.retrySafe) {
    // A documented refusal (10003, 10007…): the provider did nothing, and repeating will not help.
    return {
      kind: 'transition',
      to: 'failed',
      failure: { code: 'upstream_rejected', message: `The provider refused the reservation (${describe(f)}). Nothing was reserved.`, upstreamCode: f.upstreamCode },
    };
  }
  if (!f.outcomeUnknown && f.retrySafe) {
    // Provably not processed (never sent, or refused with 10000 before any work): back to the
    // queue; the balance is checked again before the next try.
    const attempts = order.initiateAttempts;
    if (attempts < policy.maxInitiateAttempts) {
      return { kind: 'transition', to: 'queued', detail: `initiate did not reach the provider (${describe(f)}); trying again` };
    }
    return {
      kind: 'transition',
      to: 'failed',
      failure: { code: 'provider_unavailable', message: `The provider could not be reached to reserve cards after ${attempts} attempts. Nothing was reserved.`, upstreamCode: f.upstreamCode },
    };
  }
  // Timeout, lost connection or 10001 after sending: the cards may be reserved under an id we
  // never saw. Never initiate again for this order; support asks the provider.
  return {
    kind: 'transition',
    to: 'needs_attention',
    detail: `initiate_outcome_unknown: initiate-card-request ended with ${describe(f)}; the provider may hold a reservation for this transaction_number`,
  };
}

export interface ConfirmResult {
  cards: number;
}

/** After confirm-order (status confirming, committed before the call was sent). */
export function afterConfirm(order: OrderFacts, outcome: CallOutcome<ConfirmResult>, policy: OrderPolicy = ORDER_POLICY): Decision {
  if (outcome.ok) {
    if (outcome.value.cards === order.quantity) return { kind: 'transition', to: 'fulfilled' };
    return {
      kind: 'transition',
      to: 'needs_attention',
      detail: `card_count_mismatch: the provider issued ${outcome.value.cards} card(s) for a quantity of ${order.quantity}; the ones received are stored`,
    };
  }
  const f = outcome.failure;
  if (f.salvagedCards !== undefined && f.salvagedCards > 0) {
    return { kind: 'transition', to: 'needs_attention', detail: `confirm_answer_unusable: ${f.salvagedCards} card(s) recovered from an unusable answer (${describe(f)}) and stored` };
  }
  const attempts = order.confirmAttempts;
  const transient = f.retrySafe || f.outcomeUnknown || (f.kind === 'provider' && f.upstreamCode === 10001);
  if (transient && attempts < policy.maxConfirmAttempts) {
    // Only ever with the same transaction_id: repeating a confirm cannot reserve more cards.
    return { kind: 'retry', delayMs: retryDelayMs(attempts, policy), detail: `confirm failed (${describe(f)}); repeating it with the same transaction_id` };
  }
  const reason = transient ? 'confirm_outcome_unknown' : 'confirm_refused';
  return {
    kind: 'transition',
    to: 'needs_attention',
    detail: `${reason}: confirm-order ended with ${describe(f)} after ${attempts} attempt(s); the cards may be paid for: recover them at the provider with the transaction_id`,
  };
}
