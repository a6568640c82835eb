import { describe, expect, it } from 'vitest';
import { orderTotal, sameAmount } from './money.js';
import { ORDER_POLICY, retryDelayMs } from './order-policy.js';
import { afterBalance, afterConfirm, afterInitiate, nextStep, type CallFailure, type OrderFacts } from './order-state.js';

const order = (over: Partial<OrderFacts> = {}): OrderFacts => ({
  status: 'queued',
  quantity: 2,
  transactionId: null,
  balanceChecks: 0,
  initiateAttempts: 0,
  confirmAttempts: 0,
  ...over,
});
const fail = (over: Partial<CallFailure>): { ok: false; failure: CallFailure } => ({
  ok: false,
  failure: { kind: 'provider', upstreamCode: 10001, retrySafe: false, outcomeUnknown: false, requestSent: true, ...over },
});

describe('money', () => {
  it('computes totals exactly in decimal, with the unit price decimals', () => {
    expect(orderTotal('0.10', 3)).toBe('0.30');
    expect(orderTotal('9.99', 7)).toBe('69.93');
    expect(orderTotal('15', 10)).toBe('150');
    expect(orderTotal('0.1', 3)).toBe('0.3');
    expect(() => orderTotal('1e3', 1)).toThrow(RangeError);
    expect(() => orderTotal('1.00', 0)).toThrow(RangeError);
    expect(sameAmount('15', '15.00')).toBe(true);
    expect(sameAmount('0.1', '0.10')).toBe(true);
    expect(sameAmount('0.1', '0.11')).toBe(false);
  });
});

describe('order state machine', () => {
  it('chooses the next step from the stored status', () => {
    expect(nextStep(order(), false)).toEqual({ kind: 'check_balance' });
    expect(nextStep(order(), true)).toEqual({ kind: 'hold_busy' });
    expect(nextStep(order({ status: 'reserving' }), false).kind).toBe('escalate');
    expect(nextStep(order({ status: 'reserved', transactionId: 'T' }), true)).toEqual({ kind: 'confirm' });
    expect(nextStep(order({ status: 'confirming', confirmAttempts: 1 }), false)).toEqual({ kind: 'confirm' });
    expect(nextStep(order({ status: 'confirming', confirmAttempts: ORDER_POLICY.maxConfirmAttempts }), false).kind).toBe('escalate');
    for (const status of ['fulfilled', 'failed', 'needs_attention'] as const) expect(nextStep(order({ status }), false)).toEqual({ kind: 'done' });
  });

  it('after the balance check: reserve, fail safely, or retry', () => {
    expect(afterBalance(order(), { ok: true, value: 2 })).toEqual({ kind: 'transition', to: 'reserving' });
    expect(afterBalance(order(), { ok: true, value: 1 })).toMatchObject({ to: 'failed', failure: { code: 'out_of_stock' } });
    expect(afterBalance(order(), fail({ upstreamCode: 10002 }))).toMatchObject({ to: 'failed', failure: { code: 'card_unavailable', upstreamCode: 10002 } });
    expect(afterBalance(order(), fail({ upstreamCode: 10005 }))).toMatchObject({ to: 'failed', failure: { code: 'card_unavailable' } });
    expect(afterBalance(order(), fail({ retrySafe: true }))).toMatchObject({ kind: 'retry', delayMs: retryDelayMs(1) });
    expect(afterBalance(order({ balanceChecks: ORDER_POLICY.maxBalanceChecks - 1 }), fail({ retrySafe: true }))).toMatchObject({ to: 'failed', failure: { code: 'provider_unavailable' } });
    expect(afterBalance(order(), fail({ kind: 'malformed', upstreamCode: undefined }))).toMatchObject({ to: 'failed' });
  });

  it('after initiate: commit the transaction id, fail only when nothing can be reserved, else escalate', () => {
    const reserving = order({ status: 'reserving', initiateAttempts: 1 });
    expect(afterInitiate(reserving, { ok: true, value: 'T-1' })).toEqual({ kind: 'transition', to: 'reserved', transactionId: 'T-1' });
    expect(afterInitiate(reserving, fail({ upstreamCode: 10006 }))).toMatchObject({ to: 'failed', failure: { code: 'insufficient_balance' } });
    expect(afterInitiate(reserving, fail({ upstreamCode: 10002 }))).toMatchObject({ to: 'failed', failure: { code: 'card_unavailable' } });
    expect(afterInitiate(reserving, fail({ upstreamCode: 10003 }))).toMatchObject({ to: 'failed', failure: { code: 'upstream_rejected' } });
    // Never reached the provider: back to the queue, then give up.
    expect(afterInitiate(reserving, fail({ kind: 'network', upstreamCode: undefined, retrySafe: true, requestSent: false }))).toMatchObject({ to: 'queued' });
    expect(afterInitiate(order({ status: 'reserving', initiateAttempts: ORDER_POLICY.maxInitiateAttempts }), fail({ upstreamCode: 10000, retrySafe: true }))).toMatchObject({
      to: 'failed',
      failure: { code: 'provider_unavailable' },
    });
    // Possibly committed: never initiate again.
    for (const f of [fail({ outcomeUnknown: true }), fail({ kind: 'timeout', upstreamCode: undefined, outcomeUnknown: true }), fail({ kind: 'malformed', upstreamCode: undefined, outcomeUnknown: true })]) {
      const decision = afterInitiate(reserving, f);
      expect(decision).toMatchObject({ to: 'needs_attention' });
      expect(decision.kind === 'transition' && decision.detail).toMatch(/^initiate_outcome_unknown/);
    }
    expect(afterInitiate(reserving, fail({ kind: 'malformed', outcomeUnknown: true, salvagedTransactionId: 'T-9' }))).toMatchObject({ to: 'needs_attention', transactionId: 'T-9' });
  });

  it('after confirm: fulfil, repeat with the same transaction, or escalate', () => {
    const confirming = order({ status: 'confirming', transactionId: 'T', confirmAttempts: 1 });
    expect(afterConfirm(confirming, { ok: true, value: { cards: 2 } })).toEqual({ kind: 'transition', to: 'fulfilled' });
    expect(afterConfirm(confirming, { ok: true, value: { cards: 1 } })).toMatchObject({ to: 'needs_attention', detail: expect.stringMatching(/^card_count_mismatch/) });
    expect(afterConfirm(confirming, fail({ outcomeUnknown: true }))).toMatchObject({ kind: 'retry' });
    expect(afterConfirm(confirming, fail({ kind: 'network', upstreamCode: undefined, retrySafe: true, requestSent: false }))).toMatchObject({ kind: 'retry' });
    expect(afterConfirm(order({ status: 'confirming', confirmAttempts: ORDER_POLICY.maxConfirmAttempts }), fail({ outcomeUnknown: true }))).toMatchObject({
      to: 'needs_attention',
      detail: expect.stringMatching(/^confirm_outcome_unknown/),
    });
    expect(afterConfirm(confirming, fail({ upstreamCode: 10002 }))).toMatchObject({ to: 'needs_attention', detail: expect.stringMatching(/^confirm_refused/) });
    expect(afterConfirm(confirming, fail({ kind: 'malformed', outcomeUnknown: true, salvagedCards: 2 }))).toMatchObject({ to: 'needs_attention', detail: expect.stringMatching(/^confirm_answer_unusable/) });
  });

  it('backs off exponentially up to a cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n))).toEqual([2000, 4000, 8000, 16000, 30000, 30000]);
  });
});
