import { UnrecoverableError } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type PrismaClient } from '../../../src/platform/db.js';
import type { QueueRegistry } from '../../../src/platform/queues.js';
import {
  callbackEventForStatus,
  callbackOutboxData,
  enqueueCallbackDeliveries,
  insertCallbackOutbox,
  pendingCallbackDeliveries,
} from '../../../src/orders/callbacks/index.js';
import { createIsolatedDatabase } from '../../helpers/database.js';
import { createTestQueues, type TestQueues } from '../../helpers/queues.js';
import { createOrder, seedCatalog } from './helpers.js';

describe('callback outbox', () => {
  let db: { url: string; drop: () => Promise<void> };
  let prisma: PrismaClient;
  let testQueues: TestQueues;
  let queues: QueueRegistry;
  let cardId: string;

  beforeAll(async () => {
    db = await createIsolatedDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 4 });
    testQueues = await createTestQueues('cbo');
    queues = testQueues.queues;
    cardId = await seedCatalog(prisma);
  });
  afterAll(async () => {
    await testQueues.close();
    await prisma.$disconnect();
    await db.drop();
  });

  it('has nothing to write for an order without callbackUrl', async () => {
    const order = await createOrder(prisma, cardId, { callbackUrl: null });
    expect(callbackOutboxData(order, 'order.fulfilled')).toBeUndefined();
    expect(await prisma.$transaction((tx) => insertCallbackOutbox(tx, order, 'order.fulfilled'))).toBeUndefined();
    expect(await prisma.callbackDelivery.count({ where: { orderId: order.id } })).toBe(0);
  });

  it('writes the row in the status-change transaction, and skips a repeat without aborting it', async () => {
    const order = await createOrder(prisma, cardId, { status: 'confirming', callbackUrl: 'https://shop.example/cb' });
    const first = await prisma.$transaction(async (tx) => {
      const updated = await tx.order.update({ where: { id: order.id }, data: { status: 'needs_attention', statusDetail: 'confirm_unknown' } });
      return insertCallbackOutbox(tx, updated, callbackEventForStatus(updated.status)!);
    });
    expect(first).toMatch(/^[0-9a-f-]{36}$/);

    // Same event again (e.g. a retried transition): no second row, and the transaction still commits.
    const second = await prisma.$transaction(async (tx) => {
      const updated = await tx.order.update({ where: { id: order.id }, data: { statusDetail: 'still_unknown' } });
      const id = await insertCallbackOutbox(tx, updated, 'order.needs_attention');
      await tx.order.update({ where: { id: order.id }, data: { version: { increment: 1 } } });
      return id;
    });
    expect(second).toBeUndefined();
    expect((await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).statusDetail).toBe('still_unknown');

    const rows = await prisma.callbackDelivery.findMany({ where: { orderId: order.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: first, event: 'order.needs_attention', url: 'https://shop.example/cb', status: 'pending', attempts: 0 });
    expect(rows[0]!.payload).toMatchObject({ type: 'order.needs_attention', data: { orderId: order.id, status: 'needs_attention', totalAmount: '19.98' } });
  });

  it('writes no row when the status change rolls back', async () => {
    const order = await createOrder(prisma, cardId, { status: 'confirming', callbackUrl: 'https://shop.example/cb' });
    await expect(
      prisma.$transaction(async (tx) => {
        const updated = await tx.order.update({ where: { id: order.id }, data: { status: 'fulfilled', fulfilledAt: new Date() } });
        await insertCallbackOutbox(tx, updated, 'order.fulfilled');
        throw new Error('lost the lease');
      }),
    ).rejects.toThrow('lost the lease');
    expect(await prisma.callbackDelivery.count({ where: { orderId: order.id } })).toBe(0);
  });

  it('a plain create of the same (orderId, event) is a P2002 conflict', async () => {
    const order = await createOrder(prisma, cardId, { callbackUrl: 'https://shop.example/cb' });
    await prisma.callbackDelivery.create({ data: callbackOutboxData(order, 'order.fulfilled')! });
    await expect(prisma.callbackDelivery.create({ data: callbackOutboxData(order, 'order.fulfilled')! })).rejects.toMatchObject({ code: 'P2002' });
  });

  it('lists pending rows older than the threshold for the reconciler', async () => {
    const order = await createOrder(prisma, cardId, { callbackUrl: 'https://shop.example/cb' });
    const oldId = await insertCallbackOutbox(prisma, order, 'order.fulfilled');
    await prisma.callbackDelivery.update({ where: { id: oldId! }, data: { createdAt: new Date(Date.now() - 3_600_000) } });
    const fresh = await createOrder(prisma, cardId, { callbackUrl: 'https://shop.example/cb' });
    const freshId = await insertCallbackOutbox(prisma, fresh, 'order.fulfilled');
    const done = await createOrder(prisma, cardId, { callbackUrl: 'https://shop.example/cb' });
    const doneId = await insertCallbackOutbox(prisma, done, 'order.fulfilled');
    await prisma.callbackDelivery.update({ where: { id: doneId! }, data: { status: 'delivered', createdAt: new Date(Date.now() - 3_600_000) } });

    const ids = (await pendingCallbackDeliveries(prisma, 60_000)).map((p) => p.id);
    expect(ids).toContain(oldId);
    expect(ids).not.toContain(freshId);
    expect(ids).not.toContain(doneId);
  });

  it('queues one job per delivery however often it is asked, and re-queues a finished one', async () => {
    const queue = queues.get('order-callback');
    await enqueueCallbackDeliveries(queues, ['d-1', 'd-2']);
    await enqueueCallbackDeliveries(queues, ['d-1']);
    const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
    expect(jobs.map((j) => j.id).sort()).toEqual(['d-1', 'd-2']);
    expect(jobs[0]!.opts).toMatchObject({ attempts: 12, backoff: { type: 'custom' } });

    await queue.obliterate({ force: true });

    // A job that ended while its row stayed pending (e.g. it stalled too often): asking again re-drives it.
    const worker = queues.worker('order-callback', async () => {
      throw new UnrecoverableError('stalled');
    });
    const failed = new Promise<void>((resolve) => worker.on('failed', () => resolve()));
    await enqueueCallbackDeliveries(queues, ['d-3']);
    await failed;
    await worker.close();
    expect(await (await queue.getJob('d-3'))!.getState()).toBe('failed');
    await enqueueCallbackDeliveries(queues, ['d-3']);
    expect(await (await queue.getJob('d-3'))!.getState()).toBe('waiting');
    await queue.obliterate({ force: true });
  });
});
