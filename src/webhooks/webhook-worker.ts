import { UnrecoverableError, type Job, type Worker } from 'bullmq';
import type { Prisma, PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { QueuePayloads, QueueRegistry } from '../platform/queues.js';
import { isTopic, type Topic } from './topics.js';
import { enqueueWebhookEvents } from './webhook-inbox.js';

export type WebhookEventRow = Prisma.WebhookEventGetPayload<object>;

export interface WebhookHandlerResult {
  outcome: 'processed' | 'ignored';
  /** The order the event was matched to (a UUID of ours). */
  orderId?: string;
  /** Why, in a few words (logged; e.g. "no order with this transaction_id"). */
  note?: string;
}

/**
 * What each topic does. Handlers must be idempotent: a replay, or a crash between the handler's
 * commit and the inbox update, runs one again for the same event.
 */
export type WebhookHandlers = Record<Topic, (event: WebhookEventRow) => Promise<WebhookHandlerResult>>;

export interface WebhookWorkerDeps {
  queues: QueueRegistry;
  prisma: PrismaClient;
  log: Logger;
  handlers: WebhookHandlers;
  concurrency?: number;
}

export type WebhookJobResult = 'processed' | 'ignored' | 'already_done' | 'missing';

const MAX_ERROR_CHARS = 500;

function describe(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}

/**
 * Processes one stored event. Idempotent: only a `received` row is handled, so redeliveries,
 * duplicate jobs and re-created jobs have one effect. A thrown error is recorded on the row and
 * rethrown for BullMQ to retry with back-off; after the last attempt the row is `failed` (support
 * can replay it).
 */
export async function processWebhookEvent(
  deps: Pick<WebhookWorkerDeps, 'prisma' | 'log' | 'handlers'>,
  job: Pick<Job<QueuePayloads['webhook-inbox']>, 'data' | 'attemptsMade' | 'opts'>,
): Promise<WebhookJobResult> {
  const { prisma, log, handlers } = deps;
  const { eventId } = job.data;
  const row = await prisma.webhookEvent.findUnique({ where: { id: eventId } });
  if (!row) {
    log.warn({ webhookId: eventId }, 'webhook event not found; job dropped');
    return 'missing';
  }
  if (row.status !== 'received') return 'already_done';
  const context = { webhookId: row.id, type: row.type, topic: row.topic };
  if (!isTopic(row.topic)) {
    await prisma.webhookEvent.updateMany({ where: { id: row.id, status: 'received' }, data: { status: 'ignored', flagged: true, processedAt: new Date() } });
    return 'ignored';
  }
  try {
    const result = await handlers[row.topic](row);
    await prisma.webhookEvent.updateMany({
      where: { id: row.id, status: 'received' },
      data: { status: result.outcome, attempts: { increment: 1 }, processedAt: new Date(), lastError: null, ...(result.orderId ? { orderId: result.orderId } : {}) },
    });
    log.info({ ...context, outcome: result.outcome, orderId: result.orderId, note: result.note }, 'provider webhook handled');
    return result.outcome;
  } catch (err) {
    const last = err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const lastError = describe(err);
    await prisma.webhookEvent.updateMany({
      where: { id: row.id, status: 'received' },
      data: { attempts: { increment: 1 }, lastError, ...(last ? { status: 'failed', processedAt: new Date() } : {}) },
    });
    if (last) log.error({ ...context, attempt: job.attemptsMade + 1, error: lastError }, 'provider webhook failed for good');
    else log.warn({ ...context, attempt: job.attemptsMade + 1, error: lastError }, 'provider webhook handler failed; will retry');
    throw err;
  }
}

/** The `webhook-inbox` worker. Jobs come from the receiver, replays and the reconciler. */
export function startWebhookWorker(deps: WebhookWorkerDeps): Worker<QueuePayloads['webhook-inbox'], unknown, string> {
  const log = deps.log.child({ worker: 'webhook-inbox' });
  const worker = deps.queues.worker('webhook-inbox', (job) => processWebhookEvent({ prisma: deps.prisma, log, handlers: deps.handlers }, job), {
    concurrency: deps.concurrency ?? 20,
  });
  // An 'error' event without a listener would crash the process (a Redis blip, a lost lock).
  worker.on('error', (err: Error) => log.warn({ err: { message: err.message } }, 'webhook worker error'));
  return worker;
}

/**
 * The reconciler's step: events still `received` after `olderThanMs` whose job is gone (Redis
 * lost it, or the enqueue after the INSERT failed) are queued again. Re-queueing one whose job
 * still waits changes nothing. Returns how many were looked at.
 */
export async function requeueUnprocessedWebhooks(
  deps: { prisma: Pick<PrismaClient, 'webhookEvent'>; queues: QueueRegistry },
  olderThanMs: number,
  limit = 500,
  now: Date = new Date(),
): Promise<number> {
  const rows = await deps.prisma.webhookEvent.findMany({
    where: { status: 'received', topic: { not: null }, receivedAt: { lt: new Date(now.getTime() - olderThanMs) } },
    orderBy: { receivedAt: 'asc' },
    take: limit,
    select: { id: true },
  });
  await enqueueWebhookEvents(
    deps.queues,
    rows.map((r) => r.id),
  );
  return rows.length;
}
