import type { Worker } from 'bullmq';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackDelivery } from '../../../src/generated/prisma/client.js';
import {
  CALLBACK_USER_AGENT,
  enqueueCallbackDeliveries,
  insertCallbackOutbox,
  startCallbackWorker,
  type CallbackEvent,
} from '../../../src/orders/callbacks/index.js';
import { createPrisma, type PrismaClient } from '../../../src/platform/db.js';
import { createLogger } from '../../../src/platform/logger.js';
import type { QueueRegistry } from '../../../src/platform/queues.js';
import { decodeSecret, generateSecret, verify } from '../../../src/platform/standard-webhooks.js';
import { LogCapture } from '../../helpers/context.js';
import { createIsolatedDatabase } from '../../helpers/database.js';
import { createTestQueues, type TestQueues } from '../../helpers/queues.js';
import { createOrder, FAKE_CARD_CODE, seedCatalog, startReceiver, waitFor, type OrderOverrides, type Receiver } from './helpers.js';

const MAX_ATTEMPTS = 4;
const TIMEOUT_MS = 300;

describe('callback worker', () => {
  const secret = generateSecret();
  const logs = new LogCapture();
  const log = createLogger('debug', logs);
  let db: { url: string; drop: () => Promise<void> };
  let prisma: PrismaClient;
  let testQueues: TestQueues;
  let queues: QueueRegistry;
  let dispatcher: Agent;
  let worker: Worker;
  let cardId: string;
  let receiver: Receiver;

  beforeAll(async () => {
    db = await createIsolatedDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 4 });
    testQueues = await createTestQueues('cbw');
    queues = testQueues.queues;
    dispatcher = new Agent({ keepAliveTimeout: 1_000 });
    cardId = await seedCatalog(prisma);
    worker = startCallbackWorker({
      queues,
      prisma,
      log,
      secret,
      dispatcher,
      timeoutMs: TIMEOUT_MS,
      maxAttempts: MAX_ATTEMPTS,
      backoff: { baseDelayMs: 20, maxDelayMs: 80, jitter: 0.5 },
    });
    await worker.waitUntilReady();
  });
  afterEach(async () => {
    await receiver?.close();
  });
  afterAll(async () => {
    await testQueues.close();
    await dispatcher.close();
    await prisma.$disconnect();
    await db.drop();
  });

  /** What the pipeline does: terminal status + outbox row in one transaction, enqueue after commit. */
  async function orderWithCallback(event: CallbackEvent = 'order.fulfilled', overrides: OrderOverrides = {}): Promise<string> {
    receiver = await startReceiver();
    const order = await createOrder(prisma, cardId, { callbackUrl: receiver.url, ...overrides });
    const deliveryId = await prisma.$transaction((tx) => insertCallbackOutbox(tx, order, event));
    await enqueueCallbackDeliveries(queues, [deliveryId!]);
    return deliveryId!;
  }

  function settled(deliveryId: string): Promise<CallbackDelivery> {
    return waitFor(async () => {
      const row = await prisma.callbackDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
      return row.status === 'pending' ? undefined : row;
    });
  }

  it('delivers a signed body with the documented fields and no card code', async () => {
    const deliveryId = await orderWithCallback('order.fulfilled');
    const row = await settled(deliveryId);
    expect(row).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200, lastError: null });
    expect(row.deliveredAt).toBeInstanceOf(Date);

    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hooks/giftcards');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe(CALLBACK_USER_AGENT);
    expect(req.headers['webhook-id']).toBe(deliveryId);
    expect(verify({ headers: req.headers, rawBody: req.body, keys: [decodeSecret(secret)] })).toMatchObject({ ok: true, id: deliveryId });
    expect(verify({ headers: req.headers, rawBody: req.body, keys: [decodeSecret(generateSecret())] })).toMatchObject({ ok: false });

    const order = await prisma.order.findFirstOrThrow({ where: { callbacks: { some: { id: deliveryId } } } });
    const body = JSON.parse(req.body);
    expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data']);
    expect(body.type).toBe('order.fulfilled');
    expect(body.data).toEqual({
      orderId: order.id,
      status: 'fulfilled',
      cardId,
      quantity: 2,
      unitPrice: '9.99',
      totalAmount: '19.98',
      reference: 'shop-order-42',
      transactionNumber: order.transactionNumber.toString(),
      transactionId: order.transactionId,
      failure: null,
      createdAt: order.createdAt.toISOString(),
      updatedAt: order.updatedAt.toISOString(),
      fulfilledAt: order.fulfilledAt!.toISOString(),
    });
    expect(await prisma.orderCard.count({ where: { orderId: order.id } })).toBe(1);
    expect(req.body).not.toContain(FAKE_CARD_CODE);
    expect(logs.text).not.toContain(FAKE_CARD_CODE);
    expect(logs.text).not.toContain(secret.slice('whsec_'.length));
    expect(logs.text).not.toContain(req.body);

    const timeline = await prisma.orderEvent.findMany({ where: { orderId: order.id, kind: 'callback' } });
    expect(timeline).toHaveLength(1);
    expect(timeline[0]).toMatchObject({ endpoint: 'order.fulfilled', ok: true });
  });

  it('retries after 500s with the same webhook-id and identical bytes until the storefront accepts', async () => {
    const deliveryId = await orderWithCallback('order.failed', { status: 'failed', failureCode: 'out_of_stock', failureMessage: 'No stock.', failureUpstreamCode: 409 });
    receiver.script([{ status: 500, body: 'x'.repeat(5_000) }, { status: 500 }]);
    const row = await settled(deliveryId);
    expect(row).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 200 });

    expect(receiver.requests).toHaveLength(3);
    const ids = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    const bodies = new Set(receiver.requests.map((r) => r.body));
    expect([...ids]).toEqual([deliveryId]);
    expect(bodies.size).toBe(1);
    for (const r of receiver.requests) expect(verify({ headers: r.headers, rawBody: r.body, keys: [decodeSecret(secret)] }).ok).toBe(true);
    expect(JSON.parse(receiver.requests[0]!.body).data.failure).toEqual({ code: 'out_of_stock', message: 'No stock.', upstreamCode: 409 });

    const attempts = await prisma.orderEvent.findMany({ where: { kind: 'callback', orderId: row.orderId }, orderBy: { id: 'asc' } });
    expect(attempts.map((a) => a.ok)).toEqual([false, false, true]);
    // The storefront's error page is cut short, not stored whole.
    expect(((attempts[0]!.detail as { error: string }).error).length).toBeLessThanOrEqual(210);
  });

  it('marks the delivery failed once maxAttempts are used up', async () => {
    const deliveryId = await orderWithCallback('order.needs_attention', { status: 'needs_attention' });
    receiver.script([], { status: 503, body: 'maintenance' });
    const row = await settled(deliveryId);
    expect(row).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, lastStatus: 503, lastError: 'HTTP 503: maintenance' });
    expect(row.deliveredAt).toBeNull();
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.requests).toHaveLength(MAX_ATTEMPTS);
    expect(await queues.get('order-callback').getJobState(deliveryId)).toBe('failed');
  });

  it('counts a timeout and a redirect as failed attempts, without following the redirect', async () => {
    const deliveryId = await orderWithCallback();
    receiver.script(['hang', { status: 302, headers: { location: `${receiver.url}/elsewhere` } }]);
    const row = await settled(deliveryId);
    expect(row).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 200 });
    expect(receiver.requests.map((r) => r.url)).toEqual(['/hooks/giftcards', '/hooks/giftcards', '/hooks/giftcards']);
    const attempts = await prisma.orderEvent.findMany({ where: { kind: 'callback', orderId: row.orderId }, orderBy: { id: 'asc' } });
    expect(attempts.map((a) => (a.detail as { error: string | null }).error)).toEqual([`timeout after ${TIMEOUT_MS} ms`, 'HTTP 302', null]);
  });

  it('does nothing for another job of an already delivered row', async () => {
    const deliveryId = await orderWithCallback();
    await settled(deliveryId);
    expect(receiver.requests).toHaveLength(1);

    // The reconciler asking again, and a stray duplicate under another job id.
    await enqueueCallbackDeliveries(queues, [deliveryId]);
    const queue = queues.get('order-callback');
    const stray = await queue.add('deliver', { deliveryId }, { jobId: `${deliveryId}-again`, attempts: 2, backoff: { type: 'custom' } });
    const results = await waitFor(async () => {
      const jobs = await Promise.all([queue.getJob(deliveryId), queue.getJob(stray.id!)]);
      const values = jobs.map((j) => j?.returnvalue);
      return values.every((v) => v !== undefined && v !== null) ? values : undefined;
    });
    expect(results).toEqual(['already_done', 'already_done']);
    expect(receiver.requests).toHaveLength(1);
    expect(await prisma.callbackDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ status: 'delivered', attempts: 1 });
  });
});
