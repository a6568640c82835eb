import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret } from '../../src/platform/standard-webhooks.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startReceiver, type Receiver } from './helpers.js';

/**
 * Events sent BY THE SANDBOX (orders placed through a whole test gateway, busy mode toggled by its
 * control) into the real receiver: each event id lands once in the inbox and is handled once,
 * whatever the redeliveries, duplicates and shuffles.
 */
describe('provider webhooks delivered by the sandbox', () => {
  const secret = generateSecret();
  let gateway: TestGateway;
  let receiver: Receiver;
  let sandbox: Sandbox;
  let key: string;

  beforeAll(async () => {
    receiver = await startReceiver({ secrets: [secret] });
    gateway = await startTestGateway({ sandbox: { webhook: { url: receiver.endpoint, secrets: [secret], retryDelaysMs: [50, 100, 200] } } });
    sandbox = gateway.sandbox.sandbox;
    key = await gateway.key();
  });
  afterAll(async () => {
    await gateway?.close();
    if (receiver) {
      await receiver.ctx.prisma.webhookEvent.deleteMany({ where: { id: { in: sandbox?.webhooks.list().map((e) => e.id) ?? [] } } });
      await receiver.close();
    }
  });

  async function expectOncePerEvent(ids: string[], deliveries?: (id: string) => number) {
    await sandbox.webhooks.idle();
    for (const id of ids) {
      const row = await receiver.settled(id);
      expect(row.status, id).toBe('processed');
      if (deliveries) expect(row.deliveries, id).toBe(deliveries(id));
    }
    expect(await receiver.ctx.prisma.webhookEvent.count({ where: { id: { in: ids } } })).toBe(ids.length);
    // Jobs of duplicates could still be in flight: give them a moment before counting handler calls.
    await new Promise((r) => setTimeout(r, 200));
    for (const id of ids) expect(receiver.recorder.callsFor(id), id).toBe(1);
  }

  it('stores and handles each order event once', async () => {
    const before = sandbox.webhooks.list().length;
    const placed = await Promise.all([gateway.order(key, { cardId: '301', quantity: 2 }), gateway.order(key, { cardId: '302', quantity: 1 })]);
    for (const p of placed) expect((await gateway.settled(key, p.body.id)).status).toBe('fulfilled');
    await sandbox.webhooks.idle();
    const events = sandbox.webhooks.list().slice(before);
    // Per order: order.created, status pending, status confirmed, order.finalized.
    expect(events.map((e) => e.type).sort()).toEqual(
      ['order.created', 'order.created', 'order.finalized', 'order.finalized', 'order.status_updated', 'order.status_updated', 'order.status_updated', 'order.status_updated'],
    );
    expect(events.every((e) => e.state === 'delivered')).toBe(true);
    await expectOncePerEvent(events.map((e) => e.id), () => 1);
    const rows = await receiver.ctx.prisma.webhookEvent.findMany({ where: { id: { in: events.map((e) => e.id) } } });
    expect(new Set(rows.map((r) => r.topic))).toEqual(new Set(['order_created', 'order_status', 'order_final']));
    expect(rows.every((r) => r.flagged === false)).toBe(true);
  });

  it('counts redeliveries and simultaneous duplicates on one row, handled once', async () => {
    const before = sandbox.webhooks.list().length;
    sandbox.control.setBusy(true, { reason: 'maintenance', until: Date.now() + 60_000 });
    sandbox.control.setBusy(false);
    await sandbox.webhooks.idle();
    const events = sandbox.webhooks.list().slice(before);
    expect(events.map((e) => e.type)).toEqual(['busy_mode.activated', 'busy_mode.revoked']);
    for (const e of events) {
      sandbox.control.redeliverWebhook(e.id);
      sandbox.control.duplicateWebhook(e.id, 4);
    }
    await expectOncePerEvent(events.map((e) => e.id), () => 6);
    const on = await receiver.row(events[0]!.id);
    expect(on).toMatchObject({ topic: 'busy_on', payload: { type: 'busy_mode.activated', data: { reason: 'maintenance' } } });
  });

  it('takes held events released in shuffled order, then redelivered, once each', async () => {
    sandbox.control.configureWebhooks({ hold: true });
    const before = sandbox.webhooks.list().length;
    try {
      sandbox.control.setBusy(true, { reason: 'r1' });
      sandbox.control.setBusy(false);
      sandbox.control.setBusy(true, { reason: 'r2' });
      sandbox.control.setBusy(false);
      const placed = await gateway.order(key, { cardId: '301', quantity: 1 });
      expect((await gateway.settled(key, placed.body.id)).status).toBe('fulfilled');
      const held = sandbox.webhooks.list().slice(before);
      expect(held.length).toBe(8);
      expect(held.every((e) => e.state === 'held')).toBe(true);
      const order = await sandbox.control.releaseWebhooks('shuffle');
      expect([...order].sort()).toEqual(held.map((e) => e.id).sort());
      for (const e of held) sandbox.control.redeliverWebhook(e.id);
      await expectOncePerEvent(held.map((e) => e.id), () => 2);
    } finally {
      sandbox.control.configureWebhooks({ hold: false });
    }
  });
});
