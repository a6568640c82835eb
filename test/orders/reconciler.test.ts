import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderStore } from '../../src/orders/order-store.js';
import { advanceOrder, type PipelineDeps } from '../../src/orders/pipeline.js';
import { reconcileOrders } from '../../src/orders/reconciler.js';
import { FAST_POLICY, startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('reconciler and order leases', () => {
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    key = await gw.key();
  });
  afterAll(() => gw.close());

  it('re-queues every unsettled order after Redis lost its data, and they all settle', async () => {
    await gw.busy.set(true, { reason: 'test' });
    const placed = await Promise.all(Array.from({ length: 5 }, (_, i) => gw.order(key, { cardId: '201', quantity: 1, reference: `flush-${i}` })));
    await expect.poll(async () => gw.ctx.prisma.order.count({ where: { id: { in: placed.map((p) => p.body.id) }, statusDetail: 'provider_busy' } }), { timeout: 5_000 }).toBe(5);

    // What losing Redis means to this gateway: every key under its prefix is gone.
    const keys = await gw.ctx.redis.keys(`${gw.ctx.prefix}:*`);
    if (keys.length > 0) await gw.ctx.redis.del(...keys);
    expect(await gw.ctx.queues.get('order-pipeline').getJobState(placed[0]!.body.id)).toBe('unknown');

    const report = await reconcileOrders({ prisma: gw.ctx.prisma, queues: gw.ctx.queues, log: gw.ctx.log, quietMs: 0 });
    expect(report.requeued.map((r) => r.orderId).sort()).toEqual(placed.map((p) => p.body.id).sort());
    // Running it again finds every job in place.
    const again = await reconcileOrders({ prisma: gw.ctx.prisma, queues: gw.ctx.queues, log: gw.ctx.log, quietMs: 0 });
    expect(again.requeued).toEqual([]);

    await gw.busy.set(false);
    for (const p of placed) expect((await gw.settled(key, p.body.id)).status).toBe('fulfilled');
  });

  it('leaves orders alone that a live worker holds', async () => {
    const placed = await gw.order(key, { cardId: '201', quantity: 1 });
    await gw.settled(key, placed.body.id);
    const other = createOrderStore(gw.ctx.prisma, 'someone-else', 60_000);
    await gw.ctx.prisma.order.update({ where: { id: placed.body.id }, data: { status: 'reserved', leaseOwner: null } });
    expect(await other.acquire(placed.body.id)).toMatchObject({ id: placed.body.id, leaseOwner: 'someone-else' });
    const report = await reconcileOrders({ prisma: gw.ctx.prisma, queues: gw.ctx.queues, log: gw.ctx.log, quietMs: 0 });
    expect(report.requeued.map((r) => r.orderId)).not.toContain(placed.body.id);
    await gw.ctx.prisma.order.update({ where: { id: placed.body.id }, data: { status: 'fulfilled', leaseOwner: null, leaseUntil: null } });
  });

  it('never lets two workers drive one order at once: one initiate, one reservation, one payment', async () => {
    await gw.busy.set(true, { reason: 'hold while the workers line up' });
    const placed = await gw.order(key, { cardId: '302', quantity: 1 });
    await expect.poll(async () => (await gw.ctx.prisma.order.findUniqueOrThrow({ where: { id: placed.body.id } })).statusDetail, { timeout: 5_000 }).toBe('provider_busy');
    await gw.busy.set(false);

    const deps = (owner: string): PipelineDeps => ({
      store: createOrderStore(gw.ctx.prisma, owner, 30_000),
      upstream: gw.upstream,
      vault: gw.ctx.vault,
      busy: gw.busy,
      terminal: { writesFor: () => false, inTransaction: async () => [], afterCommit: async () => undefined },
      log: gw.ctx.log,
      policy: FAST_POLICY,
    });
    // Two duplicate workers (a stalled job and its retry) plus the real worker, all at once.
    const results = await Promise.all([advanceOrder(deps('dup-a'), placed.body.id), advanceOrder(deps('dup-b'), placed.body.id)]);
    const order = await gw.settled(key, placed.body.id);
    expect(order.status).toBe('fulfilled');
    expect(results.some((r) => r.kind === 'retry' && r.reason === 'another worker holds this order') || results.every((r) => r.kind === 'settled')).toBe(true);
    const reservations = [...gw.sandbox.sandbox.state.reservations.values()].filter((r) => r.transactionNumber === order.transactionNumber);
    expect(reservations).toHaveLength(1);
    const payments = gw.sandbox.sandbox.state.confirmations.filter((c) => c.transactionId === order.transactionId && !c.replay);
    expect(payments).toHaveLength(1);
    // What the provider saw: one initiate for this transaction number, whoever sent it.
    const calls = (await (await fetch(`${gw.sandbox.sandbox.controlUrl}/calls?endpoint=initiate-card-request`)).json()) as { calls: { raw_body: string }[] };
    expect(calls.calls.filter((c) => c.raw_body.includes(`"transaction_number":${order.transactionNumber}`))).toHaveLength(1);
  });
});
