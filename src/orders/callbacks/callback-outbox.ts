import { randomUUID } from 'node:crypto';
import type { Prisma, PrismaClient } from '../../platform/db.js';
import type { QueueRegistry } from '../../platform/queues.js';
import { buildCallbackPayload, type CallbackEvent, type CallbackOrder } from './callback-payload.js';
import { DEFAULT_MAX_ATTEMPTS } from './callback-retry.js';

export type CallbackOutboxOrder = CallbackOrder & { callbackUrl: string | null };

/**
 * The outbox row for one callback, or undefined when the order has no callbackUrl. The id is
 * chosen here so the caller knows what to enqueue once its transaction commits; it is also the
 * `webhook-id` the storefront de-duplicates on.
 */
export function callbackOutboxData(order: CallbackOutboxOrder, event: CallbackEvent, now: Date = new Date()): Prisma.CallbackDeliveryCreateManyInput | undefined {
  if (!order.callbackUrl) return undefined;
  return {
    id: randomUUID(),
    orderId: order.id,
    event,
    url: order.callbackUrl,
    payload: buildCallbackPayload(order, event, now) as unknown as Prisma.InputJsonValue,
  };
}

/**
 * Writes the outbox row inside the caller's transaction (the one that makes the order terminal),
 * so a callback exists exactly when the status change committed. Returns the new delivery id, or
 * undefined when there is nothing to send: no callbackUrl, or this event was already recorded for
 * the order (unique (orderId, event); the conflict is skipped, not raised, so it cannot abort the
 * caller's transaction the way a caught P2002 would in PostgreSQL).
 */
export async function insertCallbackOutbox(
  tx: Pick<Prisma.TransactionClient, 'callbackDelivery'>,
  order: CallbackOutboxOrder,
  event: CallbackEvent,
  now: Date = new Date(),
): Promise<string | undefined> {
  const data = callbackOutboxData(order, event, now);
  if (!data) return undefined;
  const rows = await tx.callbackDelivery.createManyAndReturn({ data: [data], skipDuplicates: true, select: { id: true } });
  return rows[0]?.id;
}

export interface EnqueueCallbackOptions {
  /** BullMQ attempts per job; the worker also stops at its own maxAttempts, counted in the row. */
  attempts?: number;
}

/**
 * Queues delivery jobs; call after the transaction that wrote the rows has committed. The job id
 * is the delivery id, so asking twice queues one job. A finished job left under that id (kept for
 * a while by removeOnComplete/removeOnFail) is removed first so a reconciler can re-drive a row
 * still pending; the worker makes a job for a delivered or failed row a no-op.
 */
export async function enqueueCallbackDeliveries(queues: QueueRegistry, deliveryIds: readonly string[], options: EnqueueCallbackOptions = {}): Promise<void> {
  const queue = queues.get('order-callback');
  const attempts = options.attempts ?? DEFAULT_MAX_ATTEMPTS;
  for (const deliveryId of deliveryIds) {
    const existing = await queue.getJob(deliveryId);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') continue;
      await existing.remove().catch(() => undefined);
    }
    await queue.add('deliver', { deliveryId }, { jobId: deliveryId, attempts, backoff: { type: 'custom' } });
  }
}

export interface PendingCallbackDelivery {
  id: string;
  orderId: string;
  event: string;
  attempts: number;
  createdAt: Date;
}

/**
 * Pending deliveries created more than `olderThanMs` ago, oldest first: what a reconciler
 * re-enqueues when jobs may have been lost (Redis flushed or failed over). Re-enqueueing one whose
 * job still waits (e.g. in a long back-off) changes nothing.
 */
export async function pendingCallbackDeliveries(
  prisma: Pick<PrismaClient, 'callbackDelivery'>,
  olderThanMs: number,
  limit = 500,
  now: Date = new Date(),
): Promise<PendingCallbackDelivery[]> {
  return prisma.callbackDelivery.findMany({
    where: { status: 'pending', createdAt: { lt: new Date(now.getTime() - olderThanMs) } },
    orderBy: { createdAt: 'asc' },
    take: limit,
    select: { id: true, orderId: true, event: true, attempts: true, createdAt: true },
  });
}

/** The reconciler's step: re-enqueue pending deliveries older than `olderThanMs`; returns how many. */
export async function requeuePendingCallbacks(deps: { prisma: Pick<PrismaClient, 'callbackDelivery'>; queues: QueueRegistry }, olderThanMs: number, limit = 500): Promise<number> {
  const pending = await pendingCallbackDeliveries(deps.prisma, olderThanMs, limit);
  await enqueueCallbackDeliveries(
    deps.queues,
    pending.map((p) => p.id),
  );
  return pending.length;
}
