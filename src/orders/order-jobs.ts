import { DelayedError, type Job } from 'bullmq';
import type { Logger } from '../platform/logger.js';
import type { QueuePayloads, QueueRegistry } from '../platform/queues.js';

/** BullMQ states in which a job will still run by itself. */
const LIVE_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/**
 * Queues an order's pipeline job (job id = order id, so duplicates collapse). A finished job
 * still holding the id would make `add` a no-op, so it is removed first. Returns false when a
 * live job already exists.
 */
export async function enqueueOrder(queues: QueueRegistry, orderId: string, delayMs = 0, fresh = false): Promise<boolean> {
  const queue = queues.get('order-pipeline');
  if (fresh) {
    // A just-created order cannot have a job yet: skip the lookup on the request path.
    await queue.add('advance', { orderId }, { jobId: orderId, ...(delayMs > 0 ? { delay: delayMs } : {}) });
    return true;
  }
  const state = await queue.getJobState(orderId);
  if (LIVE_STATES.has(state)) return false;
  // A finished job, or the remains of one whose queue entries were lost ("unknown" with its hash
  // still there), would make add() a silent no-op: remove it first.
  await (await queue.getJob(orderId))?.remove();
  await queue.add('advance', { orderId }, { jobId: orderId, ...(delayMs > 0 ? { delay: delayMs } : {}) });
  return true;
}
import { advanceOrder, type PipelineDeps, type RunResult } from './pipeline.js';

/**
 * The order worker: a thin driver around advanceOrder. An order that must wait (busy provider,
 * back-off before a retry) is moved back to the delayed set with its own delay. An unexpected
 * error (database down…) fails the job; the order keeps its committed state and the reconciler
 * queues it again.
 */
export function startOrderWorker({ queues, deps, log, concurrency, lockMs = 60_000 }: { queues: QueueRegistry; deps: PipelineDeps; log: Logger; concurrency: number; lockMs?: number }) {
  return queues.worker(
    'order-pipeline',
    async (job: Job<QueuePayloads['order-pipeline']>, token?: string): Promise<RunResult> => {
      const result = await advanceOrder(deps, job.data.orderId);
      if (result.kind === 'retry') {
        log.debug({ orderId: job.data.orderId, delayMs: result.delayMs, reason: result.reason }, 'order waits');
        await job.moveToDelayed(Date.now() + result.delayMs, token);
        throw new DelayedError();
      }
      return result;
    },
    {
      concurrency,
      // A job whose worker died is re-run by another; the order's lease (not this lock) keeps
      // two runs from driving one order at once.
      lockDuration: lockMs,
      maxStalledCount: 1_000,
    },
  );
}
