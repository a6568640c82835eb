import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSupportActions, type SupportActions } from '../../src/orders/support-actions.js';
import { createTerminalHooks } from '../../src/orders/terminal-hooks.js';
import { enqueueOrder } from '../../src/orders/order-jobs.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('support actions on needs_attention orders', () => {
  let gw: TestGateway;
  let key: string;
  let actions: SupportActions;
  const actor = { keyId: '00000000-0000-4000-8000-000000000001', name: 'agent smith' };

  beforeAll(async () => {
    gw = await startTestGateway();
    key = await gw.key();
    actions = createSupportActions({
      prisma: gw.ctx.prisma,
      vault: gw.ctx.vault,
      terminal: createTerminalHooks({ queues: gw.ctx.queues, publisher: gw.ctx.redis, log: gw.ctx.log }),
      enqueue: (orderId) => enqueueOrder(gw.ctx.queues, orderId),
      log: gw.ctx.log,
    });
  });
  afterAll(() => gw.close());

  const attentionOrder = async (fault: Parameters<TestGateway['sandbox']['sandbox']['control']['setFaults']>[0]) => {
    gw.sandbox.sandbox.control.setFaults(fault);
    try {
      const res = await gw.order(key, { cardId: '201', quantity: 1 });
      const order = await gw.settled(key, res.body.id);
      expect(order.status).toBe('needs_attention');
      return order;
    } finally {
      gw.sandbox.sandbox.control.setFaults({ failNext: {}, afterCommit: {} });
    }
  };

  it('retries a lost confirm with the same transaction_id', async () => {
    const order = await attentionOrder({ failNext: { 'confirm-order': 1000 } });
    const retried = await actions.retry(order.id, actor, { note: 'provider says the reservation is still pending' });
    expect(retried.status).toBe('reserved');
    const done = await gw.settled(key, order.id);
    expect(done.status).toBe('fulfilled');
    expect(done.transactionId).toBe(order.transactionId);
    const support = await gw.ctx.prisma.orderEvent.findFirstOrThrow({ where: { orderId: order.id, kind: 'support' } });
    expect(support.detail).toMatchObject({ action: 'retry', actor: 'agent smith' });
  });

  it('retries an unknown initiate only once support confirms no reservation, under a new transaction number', async () => {
    const order = await attentionOrder({ failNext: { 'initiate-card-request': 1 } });
    await expect(actions.retry(order.id, actor, { note: 'try again' })).rejects.toMatchObject({ code: 'confirmation_required' });
    const retried = await actions.retry(order.id, actor, { note: 'provider confirmed: nothing reserved', noReservationConfirmed: true });
    expect(retried.transactionNumber).not.toBe(BigInt(order.transactionNumber));
    expect(retried.previousTransactionNumbers).toEqual([BigInt(order.transactionNumber)]);
    const done = await gw.settled(key, order.id);
    expect(done.status).toBe('fulfilled');
    expect(done.transactionNumber).toBe(Number(retried.transactionNumber));
  });

  it('resolves as failed, or as fulfilled with codes recovered at the provider, encrypted', async () => {
    const a = await attentionOrder({ failNext: { 'initiate-card-request': 1 } });
    const failed = await actions.resolve(a.id, actor, { outcome: 'failed', note: 'provider holds nothing' });
    expect(failed).toMatchObject({ status: 'failed', failureCode: 'resolved_by_support' });
    await expect(actions.retry(a.id, actor, { note: 'again' })).rejects.toMatchObject({ code: 'order_not_actionable' });

    const b = await attentionOrder({ afterCommit: { 'confirm-order': { action: 'drop', times: 1 } } });
    const recovered = gw.sandbox.sandbox.control.cardsOf(b.transactionId).map((c) => ({ code: c.cardCode, number: c.cardNumber }));
    await expect(actions.resolve(b.id, actor, { outcome: 'fulfilled', note: 'x' })).rejects.toMatchObject({ code: 'bad_request' });
    await actions.resolve(b.id, actor, { outcome: 'fulfilled', note: 'codes recovered at the provider console', cards: recovered });
    const shown = await gw.settled(key, b.id);
    expect(shown.status).toBe('fulfilled');
    expect(shown.cards).toEqual(recovered);
    const raw = JSON.stringify(await gw.ctx.prisma.$queryRawUnsafe(`SELECT t::text FROM order_cards t WHERE order_id = '${b.id}'`));
    for (const card of recovered) expect(raw).not.toContain(card.code);
  });
});
