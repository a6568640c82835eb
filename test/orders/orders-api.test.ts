import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('orders API', () => {
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    key = await gw.key();
  });
  afterAll(() => gw.close());

  it('accepts an order with 202, then fulfils it with exact money and the codes the provider issued', async () => {
    const placed = await gw.order(key, { cardId: '301', quantity: 3, reference: 'shop-1001' });
    expect(placed.status).toBe(202);
    expect(placed.body).toMatchObject({ status: 'queued', cardId: '301', quantity: 3, unitPrice: '0.10', totalAmount: '0.30', reference: 'shop-1001', cards: null, failure: null });
    expect(Number.isInteger(placed.body.transactionNumber)).toBe(true);

    const order = await gw.settled(key, placed.body.id);
    expect(order.status).toBe('fulfilled');
    expect(order.transactionId).toEqual(expect.any(String));
    expect(order.cards).toHaveLength(3);
    expect(order.fulfilledAt).toEqual(expect.any(String));

    // What the provider saw: one reservation under our transaction number, one payment of exactly 0.3.
    const reservations = [...gw.sandbox.sandbox.state.reservations.values()].filter((r) => r.transactionNumber === order.transactionNumber);
    expect(reservations).toHaveLength(1);
    expect(reservations[0]).toMatchObject({ transactionId: order.transactionId, status: 'confirmed', quantity: 3 });
    const confirm = (await (await fetch(`${gw.sandbox.sandbox.controlUrl}/calls?endpoint=confirm-order`)).json()) as { calls: { raw_body: string }[] };
    const mine = confirm.calls.find((c) => c.raw_body.includes(order.transactionId))!;
    expect(mine.raw_body).toContain('"total_amount":0.3');
    expect(mine.raw_body).not.toContain('0.30000000000000004');

    // The codes are the ones the provider issued for that transaction.
    const issued = gw.sandbox.sandbox.control.cardsOf(order.transactionId);
    expect(order.cards).toEqual(issued.map((c) => ({ code: c.cardCode, number: c.cardNumber })));
  });

  it('keeps codes encrypted at rest and out of logs, Redis and job payloads', async () => {
    const placed = await gw.order(key, { cardId: '302', quantity: 2 });
    const order = await gw.settled(key, placed.body.id);
    expect(order.status).toBe('fulfilled');
    const codes: string[] = order.cards.map((c: { code: string }) => c.code);

    const rows = await gw.ctx.prisma.orderCard.findMany({ where: { orderId: order.id } });
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.keyId).toBe('test1');
    const dump = JSON.stringify(await gw.ctx.prisma.$queryRawUnsafe(`SELECT t::text AS row FROM order_cards t WHERE order_id = '${order.id}'`));
    const events = JSON.stringify(await gw.ctx.prisma.orderEvent.findMany({ where: { orderId: order.id } }), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    const orderRow = JSON.stringify(await gw.ctx.prisma.order.findUnique({ where: { id: order.id } }), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    const redisKeys = await gw.ctx.redis.keys(`${gw.ctx.prefix}:*`);
    const redisDump = JSON.stringify(await Promise.all(redisKeys.map(async (k) => [k, await gw.ctx.redis.type(k) === 'hash' ? await gw.ctx.redis.hgetall(k) : null])));
    const job = await gw.ctx.queues.get('order-pipeline').getJob(order.id);
    for (const code of codes) {
      expect(dump).not.toContain(code);
      expect(events).not.toContain(code);
      expect(orderRow).not.toContain(code);
      expect(redisDump).not.toContain(code);
      expect(JSON.stringify(job?.data ?? {})).not.toContain(code);
      expect(JSON.stringify(job?.returnvalue ?? {})).not.toContain(code);
      expect(gw.ctx.logs.text).not.toContain(code);
    }
    expect(JSON.stringify(job?.data)).toBe(JSON.stringify({ orderId: order.id }));
  });

  it('records each step and provider call on the order timeline', async () => {
    const placed = await gw.order(key, { cardId: '201', quantity: 1 });
    await gw.settled(key, placed.body.id);
    const events = await gw.ctx.prisma.orderEvent.findMany({ where: { orderId: placed.body.id }, orderBy: { id: 'asc' } });
    const statuses = events.filter((e) => e.kind === 'status').map((e) => e.toStatus);
    expect(statuses).toEqual(['queued', 'reserving', 'reserved', 'confirming', 'fulfilled']);
    const calls = events.filter((e) => e.kind === 'provider_call').map((e) => [e.endpoint, e.ok, e.upstreamCode]);
    expect(calls).toEqual(
      expect.arrayContaining([
        ['getBalance', true, 11111],
        ['initiateCardRequest', true, 11111],
        ['confirmOrder', true, 11111],
      ]),
    );
    for (const e of events.filter((e) => e.kind === 'provider_call')) expect(e.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('replays the same order for the same key and body, and refuses the key with another body', async () => {
    const idem = `idem-replay-${Date.now()}`;
    const first = await gw.order(key, { cardId: '201', quantity: 1, reference: 'r-1' }, { idempotencyKey: idem });
    expect(first.status).toBe(202);
    const again = await gw.order(key, { cardId: '201', quantity: 1, reference: 'r-1' }, { idempotencyKey: idem });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const other = await gw.order(key, { cardId: '201', quantity: 2, reference: 'r-1' }, { idempotencyKey: idem });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ code: 'idempotency_key_reused', orderId: first.body.id });
    // Another storefront's key has its own idempotency space.
    const otherKey = await gw.key();
    const theirs = await gw.order(otherKey, { cardId: '201', quantity: 1, reference: 'r-1' }, { idempotencyKey: idem });
    expect(theirs.status).toBe(202);
    expect(theirs.body.id).not.toBe(first.body.id);
  });

  it('makes exactly one order from many concurrent requests with one key', async () => {
    const idem = `idem-race-${Date.now()}`;
    const answers = await Promise.all(Array.from({ length: 12 }, () => gw.order(key, { cardId: '301', quantity: 1 }, { idempotencyKey: idem })));
    const ids = new Set(answers.map((a) => a.body.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.status === 202)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200 && a.headers['idempotent-replayed'] === 'true')).toHaveLength(11);
    expect(await gw.ctx.prisma.order.count({ where: { idempotencyKey: idem } })).toBe(1);
  });

  it('answers with the settled order when asked to wait', async () => {
    const res = await gw.order(key, { cardId: '201', quantity: 1 }, { prefer: 'wait=10' });
    expect(res.status).toBe(200);
    expect(res.headers['preference-applied']).toBe('wait=10');
    expect(res.body.status).toBe('fulfilled');
    expect(res.body.cards).toHaveLength(1);
  });

  it('validates input with clear problems and stores nothing', async () => {
    const before = await gw.ctx.prisma.order.count();
    const cases: [Record<string, unknown>, number, string][] = [
      [{ cardId: '301', quantity: 0 }, 400, 'validation_failed'],
      [{ cardId: '301', quantity: 11 }, 400, 'validation_failed'],
      [{ cardId: '301', quantity: '2' }, 400, 'validation_failed'],
      [{ cardId: '301', quantity: 1, extra: true }, 400, 'validation_failed'],
      [{ cardId: '301', quantity: 1, callbackUrl: 'ftp://x' }, 400, 'validation_failed'],
      [{ cardId: 'nope', quantity: 1 }, 404, 'card_not_found'],
      [{ cardId: 'v-1', quantity: 1 }, 404, 'card_not_found'],
      [{ cardId: '301', quantity: 1, expectedUnitPrice: '0.20' }, 409, 'price_changed'],
    ];
    for (const [body, status, code] of cases) {
      const res = await gw.order(key, body);
      expect([JSON.stringify(body), res.status, res.body.code]).toEqual([JSON.stringify(body), status, code]);
    }
    const changed = await gw.order(key, { cardId: '301', quantity: 1, expectedUnitPrice: '0.20' });
    expect(changed.body).toMatchObject({ currentUnitPrice: '0.10', expectedUnitPrice: '0.20' });
    expect((await gw.order(key, { cardId: '301', quantity: 1, expectedUnitPrice: '0.1' })).status).toBe(202);

    const missingKey = await gw.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${key}` }, payload: { cardId: '301', quantity: 1 } });
    expect(missingKey.statusCode).toBe(400);
    expect(missingKey.json().errors[0].path).toMatch(/idempotency-key/);
    const badKey = await gw.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'x'.repeat(256) }, payload: { cardId: '301', quantity: 1 } });
    expect(badKey.statusCode).toBe(400);
    expect(await gw.ctx.prisma.order.count()).toBe(before + 1);
  });

  it('shows a storefront only its own orders, and finds them by reference', async () => {
    const mine = await gw.order(key, { cardId: '201', quantity: 1, reference: 'ref-own' });
    const stranger = await gw.key();
    const res = await gw.app.inject({ method: 'GET', url: `/v1/orders/${mine.body.id}`, headers: { authorization: `Bearer ${stranger}` } });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('order_not_found');
    const byRef = await gw.app.inject({ method: 'GET', url: '/v1/orders?reference=ref-own', headers: { authorization: `Bearer ${key}` } });
    expect(byRef.json().data.map((o: { id: string }) => o.id)).toEqual([mine.body.id]);
    const theirs = await gw.app.inject({ method: 'GET', url: '/v1/orders?reference=ref-own', headers: { authorization: `Bearer ${stranger}` } });
    expect(theirs.json().data).toEqual([]);
    const catalogOnly = await gw.key(['catalog:read']);
    expect((await gw.order(catalogOnly, { cardId: '201', quantity: 1 })).status).toBe(403);
  });
});
