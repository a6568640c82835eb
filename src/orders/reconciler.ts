import type { PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { QueueRegistry } from '../platform/queues.js';
import { requeuePendingCallbacks } from './callbacks/index.js';
import { enqueueOrder } from './order-jobs.js';

export interface ReconcileReport {
  /** Non-terminal orders looked at. */
  checked: number;
  /** Orders whose job was missing or finished, queued again: [orderId, status]. */
  requeued: { orderId: string; status: string }[];
  /** Orders a live worker holds (unexpired lease) or whose job is still queued. */
  live: number;
  /** Pending storefront callbacks queued again. */
  callbacksRequeued: number;
}

export interface ReconcileDeps {
  prisma: PrismaClient;
  queues: QueueRegistry;
  log: Logger;
  /** Leave orders changed more recently than this to their worker (default 30 s). */
  quietMs?: number;
  limit?: number;
}

/**
 * Makes PostgreSQL's view of the work the queue's again. Every order that is not settled and
 * that no live worker holds gets its pipeline job back, unless one is still queued; so a crash,
 * a lost job, or Redis losing its data (FLUSHALL, a restart without persistence) loses no order.
 * What happens next is the state machine's call: a 'reserving' order is escalated, a
 * 'confirming' one repeats its confirm with the same transaction_id, a 'queued' one starts.
 * Safe to run from several instances at once: job ids are order ids, so re-queues collapse.
 */
export async function reconcileOrders({ prisma, queues, log, quietMs = 30_000, limit = 1_000 }: ReconcileDeps): Promise<ReconcileReport> {
  const before = new Date(Date.now() - quietMs);
  const candidates = await prisma.order.findMany({
    where: {
      status: { in: ['queued', 'reserving', 'reserved', 'confirming'] },
      updatedAt: { lt: before },
      OR: [{ leaseUntil: null }, { leaseUntil: { lt: new Date() } }],
    },
    select: { id: true, status: true },
    orderBy: { updatedAt: 'asc' },
    take: limit,
  });
  const report: ReconcileReport = { checked: candidates.length, requeued: [], live: 0, callbacksRequeued: 0 };
  for (const order of candidates) {
    if (await enqueueOrder(queues, order.id)) report.requeued.push({ orderId: order.id, status: order.status });
    else report.live++;
  }
  report.callbacksRequeued = await requeuePendingCallbacks({ prisma, queues }, Math.max(quietMs, 60_000));
  if (report.requeued.length > 0 || report.callbacksRequeued > 0) {
    log.warn({ requeued: report.requeued.length, callbacks: report.callbacksRequeued }, 'reconciler re-queued work that had no live job');
  }
  return report;
}
