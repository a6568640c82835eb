import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Prisma } from '../../src/platform/db.js';
import { createOrderTopicHandlers, type WebhookEventLike } from '../../src/webhooks/order-topics.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('provider webhook topics: orders and busy mode', () => {
  let gw: TestGateway;
  let key: string;
  let handlers: ReturnType<typeof createOrderTopicHandlers>;

  beforeAll(async () => {
    gw = await startTestGateway();
    key = await gw.key();
    handlers = createOrderTopicHandlers({ prisma: gw.ctx.prisma, queues: gw.ctx.queues, busy: gw.busy, log: gw.ctx.log });
  });
  afterAll(() => gw.close());

  /** Stores an inbox row as the receiver would, and returns the event the handlers see. */
  async function event(type: string, data: Record<string, unknown>, occurredAt = new Date()): Promise<WebhookEventLike> {
    const id = `evt_${randomUUID()}`;
    const payload = JSON.parse(JSON.stringify({ type, timestamp: occurredAt.toISOString(), data })) as Prisma.InputJsonObject;
    await gw.ctx.prisma.webhookEvent.create({ data: { id, type, topic: null, occurredAt, payload } });
    return { id, type, occurredAt, payload: payload as Prisma.JsonValue };
  }

  async function attention(faults: Parameters<TestGateway['sandbox']['sandbox']['control']['setFaults']>[0], quantity = 1) {
    gw.sandbox.sandbox.control.setFaults(faults);
    try {
      const res = await gw.order(key, { cardId: '201', quantity });
      const order = await gw.settled(key, res.body.id);
      expect(order.status).toBe('needs_attention');
      return order;
    } finally {
      gw.sandbox.sandbox.control.setFaults({ failNext: {}, afterCommit: {} });
    }
  }

  it('settles an unknown initiate from order.created: learns the transaction_id and confirms', async () => {
    const order = await attention({ afterCommit: { 'initiate-card-request': { action: 'drop', times: 1 } } });
    const reservation = [...gw.sandbox.sandbox.state.reservations.values()].find((r) => r.transactionNumber === order.transactionNumber)!;
    const created = await event('order.created', { transaction_id: reservation.transactionId, transaction_number: order.transactionNumber, card_id: '201', quantity: 1 });
    const result = await handlers.order_created(created);
    expect(result).toMatchObject({ outcome: 'processed', orderId: order.id });
    const done = await gw.settled(key, order.id);
    expect(done.status).toBe('fulfilled');
    expect(done.transactionId).toBe(reservation.transactionId);
    expect(done.cards).toEqual(gw.sandbox.sandbox.control.cardsOf(reservation.transactionId).map((c) => ({ code: c.cardCode, number: c.cardNumber })));

    // The same event again (a redelivery or a replay) has no further effect.
    const before = await gw.ctx.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
    await handlers.order_created(created);
    const after = await gw.ctx.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
    expect(after.version).toBe(before.version);
    const timeline = await gw.ctx.prisma.orderEvent.findMany({ where: { orderId: order.id, kind: 'webhook' } });
    expect(timeline).toHaveLength(2);
  });

  it('fails an order whose reservation the provider reports expired, and never moves a settled order back', async () => {
    const order = await attention({ failNext: { 'initiate-card-request': 1 } });
    const expired = await event('order.status_updated', { transaction_number: order.transactionNumber, status: 'expired' });
    await handlers.order_status(expired);
    const failed = await gw.settled(key, order.id);
    expect(failed).toMatchObject({ status: 'failed', failure: { code: 'reservation_expired' } });

    // Out of order: a 'pending' update arriving later changes nothing.
    const late = await event('order.status_updated', { transaction_number: order.transactionNumber, status: 'pending' }, new Date(Date.now() - 60_000));
    await handlers.order_status(late);
    expect((await gw.ctx.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('failed');
  });

  it('asks the provider once more when it reports a lost confirm paid; codes never come from the webhook', async () => {
    const order = await attention({ afterCommit: { 'confirm-order': { action: 'drop', times: 1 } } });
    const final = await event('order.finalized', {
      transaction_id: order.transactionId,
      transaction_number: order.transactionNumber,
      status: 'completed',
      cards_count: 1,
      // A provider (or an attacker) putting codes in a webhook: they must never be stored.
      cards: [{ card_code: 'WEBHOOK-CODE-1', card_number: 'SN-1' }],
    });
    const result = await handlers.order_final(final);
    expect(result.note).toMatch(/paid/);
    // The sandbox refuses a repeated confirm (its default): back to needs_attention, nothing stored.
    await expect.poll(async () => (await gw.ctx.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status, { timeout: 30_000 }).toBe('needs_attention');
    expect(await gw.ctx.prisma.orderCard.count({ where: { orderId: order.id } })).toBe(0);
    const rows = JSON.stringify(await gw.ctx.prisma.$queryRawUnsafe(`SELECT t::text FROM order_cards t`));
    expect(rows).not.toContain('WEBHOOK-CODE-1');
  });

  it('flags events naming no order, or an order it no longer tracks that number for', async () => {
    const stray = await event('order.created', { transaction_id: 'T-unknown', transaction_number: 987654321, card_id: '201', quantity: 1 });
    expect(await handlers.order_created(stray)).toMatchObject({ outcome: 'ignored' });
    expect((await gw.ctx.prisma.webhookEvent.findUniqueOrThrow({ where: { id: stray.id } })).flagged).toBe(true);
  });

  it('follows busy mode, ignoring a change older than the one in force', async () => {
    const t0 = new Date(Date.now() - 10_000);
    const until = new Date(Date.now() + 3_600_000);
    await handlers.busy_on(await event('busy_mode.activated', { reason: 'maintenance', until: until.toISOString() }, t0));
    expect(await gw.busy.current()).toMatchObject({ active: true, reason: 'maintenance' });
    expect((await gw.busy.current()).until?.toISOString()).toBe(until.toISOString());

    await handlers.busy_off(await event('busy_mode.revoked', {}, new Date(t0.getTime() + 5_000)));
    expect((await gw.busy.current()).active).toBe(false);
    // The activation delivered again, late: older than the revocation, so ignored.
    const late = await handlers.busy_on(await event('busy_mode.activated', { reason: 'maintenance' }, t0));
    expect(late.outcome).toBe('ignored');
    expect((await gw.busy.current()).active).toBe(false);
  });

  it('releases orders held by busy mode as soon as it is revoked', async () => {
    await handlers.busy_on(await event('busy_mode.activated', { reason: 'peak' }));
    const res = await gw.order(key, { cardId: '201', quantity: 1 });
    await expect.poll(async () => (await gw.ctx.prisma.order.findUniqueOrThrow({ where: { id: res.body.id } })).statusDetail, { timeout: 5_000 }).toBe('provider_busy');
    const off = await handlers.busy_off(await event('busy_mode.revoked', {}));
    expect(off.note).toMatch(/released/);
    expect((await gw.settled(key, res.body.id, 15_000)).status).toBe('fulfilled');
  });
});

describe('busy mode in /readyz', () => {
  it('shows busy mode without making the instance unready', async () => {
    const gw = await startTestGateway();
    try {
      await gw.busy.set(true, { reason: 'maintenance' });
      const res = await gw.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(200);
      expect(res.json().checks.provider_busy_mode).toMatchObject({ ok: false, error: 'busy', details: { active: true, reason: 'maintenance' } });
      await gw.busy.set(false);
      expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).json().checks.provider_busy_mode).toMatchObject({ ok: true, details: { active: false } });
    } finally {
      await gw.close();
    }
  });
});
