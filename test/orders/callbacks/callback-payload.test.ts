import { describe, expect, it } from 'vitest';
import {
  buildCallbackPayload,
  callbackEventForStatus,
  callbackRetryDelay,
  serializeCallbackPayload,
  type CallbackOrder,
} from '../../../src/orders/callbacks/index.js';
import { FAKE_CARD_CODE } from './helpers.js';

const order: CallbackOrder = {
  id: '6f1c9a52-3f0e-4a39-9a55-0d6f0b1f1e11',
  status: 'failed',
  cardId: 'C-10',
  quantity: 3,
  unitPrice: '0.10',
  totalAmount: '0.300000',
  reference: 'r-1',
  transactionNumber: 9007199254740993n,
  transactionId: null,
  failureCode: 'out_of_stock',
  failureMessage: 'The provider has no stock for this card.',
  failureUpstreamCode: 422,
  createdAt: new Date('2026-01-02T03:04:05.006Z'),
  updatedAt: new Date('2026-01-02T03:04:07.000Z'),
  fulfilledAt: null,
};

describe('callback payload', () => {
  it('builds the documented body from the allowlisted fields', () => {
    const payload = buildCallbackPayload(order, 'order.failed', new Date('2026-01-02T03:04:08.000Z'));
    expect(payload).toEqual({
      type: 'order.failed',
      timestamp: '2026-01-02T03:04:08.000Z',
      data: {
        orderId: order.id,
        status: 'failed',
        cardId: 'C-10',
        quantity: 3,
        unitPrice: '0.10',
        totalAmount: '0.30',
        reference: 'r-1',
        transactionNumber: '9007199254740993',
        transactionId: null,
        failure: { code: 'out_of_stock', message: 'The provider has no stock for this card.', upstreamCode: 422 },
        createdAt: '2026-01-02T03:04:05.006Z',
        updatedAt: '2026-01-02T03:04:07.000Z',
        fulfilledAt: null,
      },
    });
  });

  it('never carries anything outside the allowlist, such as cards held next to the order', () => {
    const withSecrets = { ...order, status: 'fulfilled' as const, failureCode: null, cards: [{ code: FAKE_CARD_CODE, number: 'N1' }], leaseOwner: 'w1', callbackUrl: 'https://shop.example/cb?token=s3cret' };
    const body = serializeCallbackPayload(buildCallbackPayload(withSecrets, 'order.fulfilled'));
    expect(body).not.toContain(FAKE_CARD_CODE);
    expect(body).not.toContain('s3cret');
    expect(body).not.toContain('leaseOwner');
    expect(JSON.parse(body).data.failure).toBeNull();
  });

  it('serializes to the same bytes whatever key order the stored JSON comes back in', () => {
    const payload = buildCallbackPayload(order, 'order.failed');
    const reordered = JSON.parse(JSON.stringify({ data: { ...payload.data, failure: { upstreamCode: 422, message: order.failureMessage, code: order.failureCode } }, timestamp: payload.timestamp, type: payload.type }));
    expect(serializeCallbackPayload(reordered)).toBe(serializeCallbackPayload(payload));
    expect(serializeCallbackPayload(payload).startsWith('{"type":"order.failed","timestamp":')).toBe(true);
    // A stored payload holding more than it should is cut back to the allowlist.
    expect(serializeCallbackPayload({ ...payload, cards: [{ code: FAKE_CARD_CODE }] })).not.toContain(FAKE_CARD_CODE);
  });

  it('maps terminal statuses to events and ignores the others', () => {
    expect(callbackEventForStatus('fulfilled')).toBe('order.fulfilled');
    expect(callbackEventForStatus('failed')).toBe('order.failed');
    expect(callbackEventForStatus('needs_attention')).toBe('order.needs_attention');
    expect(callbackEventForStatus('confirming')).toBeUndefined();
  });

  it('backs off exponentially with bounded jitter and a cap', () => {
    const backoff = { baseDelayMs: 1_000, maxDelayMs: 10_000, jitter: 0.2 };
    expect([1, 2, 3, 4, 5, 6].map((a) => callbackRetryDelay(a, backoff, () => 0))).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
    expect(callbackRetryDelay(3, backoff, () => 0.999)).toBeGreaterThanOrEqual(3_200);
    expect(callbackRetryDelay(3, backoff, () => 0.999)).toBeLessThan(4_000);
    // The defaults spread 12 attempts over hours, not minutes.
    const total = Array.from({ length: 11 }, (_, i) => callbackRetryDelay(i + 1, undefined, () => 0)).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(3 * 3_600_000);
  });
});
