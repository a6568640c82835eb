import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processWebhookEvent, recordWebhookEvent, recordWebhookEvents, requeueUnprocessedWebhooks } from '../../src/webhooks/index.js';
import { createIsolatedDatabase } from '../helpers/database.js';
import { recordingHandlers, startReceiver, statusUpdate, type Receiver } from './helpers.js';

describe('webhook inbox: worker, reconciler and support routes', () => {
  let db: { url: string; drop: () => Promise<void> };
  let receiver: Receiver;

  beforeAll(async () => {
    db = await createIsolatedDatabase();
    receiver = await startReceiver({ env: { DATABASE_URL: db.url } });
  });
  afterAll(async () => {
    await receiver?.close();
    await db?.drop();
  });

  const inject = (method: 'GET' | 'POST', url: string, key: string) => receiver.app.inject({ method, url, headers: { authorization: `Bearer ${key}` } });

  it('retries a failing handler with back-off and records the error until it succeeds', async () => {
    receiver.recorder.failNext(1);
    const res = await receiver.send(statusUpdate('confirmed'));
    expect(res.status).toBe(204);
    const deadline = Date.now() + 2_000;
    while ((await receiver.row(res.id))?.lastError == null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await receiver.row(res.id)).toMatchObject({ status: 'received', attempts: 1, lastError: 'Error: handler exploded (test)' });
    const row = await receiver.settled(res.id, 10_000);
    expect(row).toMatchObject({ status: 'processed', attempts: 2, lastError: null });
    expect(receiver.recorder.callsFor(res.id)).toBe(2);
  });

  it('stores copies of one event in one batch as one row counting them', async () => {
    const [a, b] = [receiver.newId(), receiver.newId()];
    const entry = (id: string) => ({ id, type: 'merchant.note', topic: undefined, occurredAt: undefined, payload: {}, flagged: true, sourceIp: '127.0.0.1' });
    const first = await recordWebhookEvents(receiver.ctx.prisma, [entry(a), entry(a), entry(b)]);
    expect(first.map((w) => [w.inserted, w.deliveries, w.status])).toEqual([[true, 2, 'ignored'], [false, 2, 'ignored'], [true, 1, 'ignored']]);
    const again = await recordWebhookEvents(receiver.ctx.prisma, [entry(a)]);
    expect(again[0]).toMatchObject({ inserted: false, deliveries: 3 });
  });

  it('marks an event failed after its last attempt, and leaves a settled event alone', async () => {
    const recorder = recordingHandlers();
    recorder.failNext(1);
    const id = receiver.newId();
    await recordWebhookEvent(receiver.ctx.prisma, { id, type: 'busy_mode.revoked', topic: 'busy_off', occurredAt: undefined, payload: {}, flagged: false, sourceIp: '127.0.0.1' });
    const deps = { prisma: receiver.ctx.prisma, log: receiver.ctx.log, handlers: recorder.handlers };
    await expect(processWebhookEvent(deps, { data: { eventId: id }, attemptsMade: 7, opts: { attempts: 8 } })).rejects.toThrow('handler exploded');
    expect(await receiver.row(id)).toMatchObject({ status: 'failed', attempts: 1, lastError: 'Error: handler exploded (test)' });
    expect(await processWebhookEvent(deps, { data: { eventId: id }, attemptsMade: 0, opts: { attempts: 8 } })).toBe('already_done');
    expect(await processWebhookEvent(deps, { data: { eventId: 'no-such-event' }, attemptsMade: 0, opts: {} })).toBe('missing');
    expect(recorder.calls.length).toBe(1);
  });

  it('re-queues events whose job was lost (reconciler)', async () => {
    const id = receiver.newId();
    await recordWebhookEvent(receiver.ctx.prisma, { id, type: 'busy_mode.activated', topic: 'busy_on', occurredAt: undefined, payload: { type: 'busy_mode.activated' }, flagged: false, sourceIp: '127.0.0.1' });
    await new Promise((r) => setTimeout(r, 100));
    expect((await receiver.row(id))!.status).toBe('received');
    expect(await requeueUnprocessedWebhooks({ prisma: receiver.ctx.prisma, queues: receiver.ctx.queues }, 60_000)).toBe(0);
    expect(await requeueUnprocessedWebhooks({ prisma: receiver.ctx.prisma, queues: receiver.ctx.queues }, 0, 500, new Date(Date.now() + 1_000))).toBeGreaterThanOrEqual(1);
    expect(await receiver.settled(id)).toMatchObject({ status: 'processed' });
    expect(receiver.recorder.callsFor(id)).toBe(1);
  });

  it('lists events newest first with filters and a cursor, behind support:read', async () => {
    const orderId = randomUUID();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await receiver.send(statusUpdate('pending'));
      ids.push(res.id);
      await receiver.settled(res.id);
    }
    await receiver.ctx.prisma.webhookEvent.update({ where: { id: ids[1]! }, data: { orderId } });
    const unknown = await receiver.send({ type: 'vendor.renamed', timestamp: new Date().toISOString(), data: { card_code: 'SECRET-1' } });

    const reader = await receiver.ctx.key(['support:read']);
    expect((await inject('GET', '/v1/support/webhooks', await receiver.ctx.key(['orders:read']))).statusCode).toBe(403);
    expect((await receiver.app.inject({ method: 'GET', url: '/v1/support/webhooks' })).statusCode).toBe(401);

    const all = await inject('GET', '/v1/support/webhooks?limit=200', reader);
    expect(all.statusCode).toBe(200);
    const listed = all.json().data as any[];
    const received = listed.map((e) => e.receivedAt);
    expect(received).toEqual([...received].sort().reverse());
    expect(listed[0]).toMatchObject({ id: unknown.id, type: 'vendor.renamed', topic: null, status: 'ignored', flagged: true, deliveries: 1 });
    expect(JSON.stringify(all.json())).not.toContain('SECRET-1');
    expect(Object.keys(listed[0]).sort()).toEqual(['attempts', 'deliveries', 'flagged', 'id', 'lastError', 'occurredAt', 'orderId', 'payload', 'processedAt', 'receivedAt', 'sourceIp', 'status', 'topic', 'type']);

    const ignored = (await inject('GET', '/v1/support/webhooks?status=ignored', reader)).json().data as any[];
    expect(ignored.map((e) => e.id)).toContain(unknown.id);
    expect(ignored.every((e) => e.status === 'ignored')).toBe(true);
    expect((await inject('GET', '/v1/support/webhooks?type=vendor.renamed', reader)).json().data.map((e: any) => e.id)).toEqual([unknown.id]);
    expect((await inject('GET', `/v1/support/webhooks?orderId=${orderId}`, reader)).json().data.map((e: any) => e.id)).toEqual([ids[1]]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await inject('GET', `/v1/support/webhooks?from=${future}`, reader)).json().data).toEqual([]);
    expect((await inject('GET', `/v1/support/webhooks?to=${encodeURIComponent(listed[listed.length - 1].receivedAt)}`, reader)).json().data).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (await inject('GET', `/v1/support/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ''}`, reader)).json();
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((e: any) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(listed.map((e) => e.id));

    expect((await inject('GET', '/v1/support/webhooks?cursor=garbage', reader)).json()).toMatchObject({ status: 400, code: 'bad_request' });
    expect((await inject('GET', '/v1/support/webhooks?limit=0', reader)).statusCode).toBe(400);
  });

  it('replays a stored event behind support:write: processed again, once more', async () => {
    const res = await receiver.send(statusUpdate('confirmed'));
    await receiver.settled(res.id);
    expect(receiver.recorder.callsFor(res.id)).toBe(1);
    const writer = await receiver.ctx.key(['support:write']);
    expect((await inject('POST', `/v1/support/webhooks/${res.id}/replay`, await receiver.ctx.key(['support:read']))).statusCode).toBe(403);

    const replay = await inject('POST', `/v1/support/webhooks/${res.id}/replay`, writer);
    expect(replay.statusCode).toBe(202);
    expect(replay.json()).toMatchObject({ id: res.id, status: 'received', processedAt: null });
    const deadline = Date.now() + 5_000;
    while (receiver.recorder.callsFor(res.id) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await receiver.settled(res.id)).toMatchObject({ status: 'processed', attempts: 2 });
    expect(receiver.recorder.callsFor(res.id)).toBe(2);

    expect((await inject('POST', '/v1/support/webhooks/msg_nope/replay', writer)).json()).toMatchObject({ status: 404, code: 'webhook_event_not_found' });
    const unknown = await receiver.send({ type: 'vendor.renamed', data: {} });
    expect((await inject('POST', `/v1/support/webhooks/${unknown.id}/replay`, writer)).json()).toMatchObject({ status: 409, code: 'conflict' });
  });
});
