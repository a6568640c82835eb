import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import { Prisma, type PrismaClient } from '../platform/db.js';
import type { QueueRegistry } from '../platform/queues.js';
import type { Topic } from './topics.js';

/** Processing attempts per event (BullMQ job attempts), with exponential back-off from 1 s. */
export const WEBHOOK_JOB_ATTEMPTS = 8;
export const WEBHOOK_JOB_OPTIONS: JobsOptions = { attempts: WEBHOOK_JOB_ATTEMPTS, backoff: { type: 'exponential', delay: 1_000 } };

export interface InboxEntry {
  id: string;
  type: string;
  topic: Topic | undefined;
  occurredAt: Date | undefined;
  /** Already stripped of anything like a card code. */
  payload: unknown;
  flagged: boolean;
  sourceIp: string;
}

export interface InboxWrite {
  /** False for a redelivery or duplicate of an event already in the inbox. */
  inserted: boolean;
  status: 'received' | 'processed' | 'ignored' | 'failed';
  topic: string | null;
  deliveries: number;
}

type InboxRow = { id: string; inserted: boolean; status: InboxWrite['status']; topic: string | null; deliveries: number };

/**
 * Stores verified deliveries, once per event id: a repeat only counts itself (`deliveries`). One
 * statement for the whole batch, so concurrent duplicates race inside PostgreSQL, not in our code,
 * and one commit (one WAL flush) covers many events. Unknown types are stored already `ignored`:
 * kept for a human (flagged), never processed.
 */
export async function recordWebhookEvents(prisma: Pick<PrismaClient, '$queryRaw'>, entries: readonly InboxEntry[]): Promise<InboxWrite[]> {
  // ON CONFLICT cannot touch one row twice in a statement: copies of an event in the same batch
  // become one row carrying their count.
  const groups = new Map<string, { entry: InboxEntry; copies: number }>();
  for (const entry of entries) {
    const group = groups.get(entry.id);
    if (group) group.copies++;
    else groups.set(entry.id, { entry, copies: 1 });
  }
  const values = [...groups.values()].map(
    ({ entry, copies }) =>
      Prisma.sql`(${entry.id}, ${entry.type}, ${entry.topic ?? null}, ${entry.occurredAt ?? null}::timestamptz, ${JSON.stringify(entry.payload)}::jsonb,
                  ${entry.topic ? 'received' : 'ignored'}::webhook_event_status, ${entry.flagged}, ${entry.sourceIp}, ${copies}::int)`,
  );
  const rows = await prisma.$queryRaw<InboxRow[]>`
    INSERT INTO webhook_events (id, type, topic, occurred_at, payload, status, flagged, source_ip, deliveries)
    VALUES ${Prisma.join(values)}
    ON CONFLICT (id) DO UPDATE SET deliveries = webhook_events.deliveries + EXCLUDED.deliveries
    RETURNING id, (xmax = 0) AS inserted, status, topic, deliveries`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const seen = new Set<string>();
  return entries.map((entry) => {
    const row = byId.get(entry.id)!;
    // Only the first copy of a new event counts as the one that inserted it.
    const inserted = row.inserted && !seen.has(entry.id);
    seen.add(entry.id);
    return { inserted, status: row.status, topic: row.topic, deliveries: row.deliveries };
  });
}

export async function recordWebhookEvent(prisma: Pick<PrismaClient, '$queryRaw'>, entry: InboxEntry): Promise<InboxWrite> {
  return (await recordWebhookEvents(prisma, [entry]))[0]!;
}

export interface InboxWriter {
  write(entry: InboxEntry): Promise<InboxWrite>;
}

/**
 * Group commit for the request path: a write goes out at once when a connection is free; writes
 * arriving meanwhile are sent together by the next flush. No added latency when idle; under load
 * one INSERT (and one WAL flush) acknowledges many deliveries. Each caller still answers only
 * after its own row is committed.
 */
export function createInboxWriter(prisma: Pick<PrismaClient, '$queryRaw'>, { maxBatch = 200, maxInFlight = 4 }: { maxBatch?: number; maxInFlight?: number } = {}): InboxWriter {
  let pending: { entry: InboxEntry; resolve: (w: InboxWrite) => void; reject: (e: unknown) => void }[] = [];
  let inFlight = 0;
  const pump = (): void => {
    while (inFlight < maxInFlight && pending.length > 0) {
      const batch = pending.slice(0, maxBatch);
      pending = pending.slice(batch.length);
      inFlight++;
      recordWebhookEvents(
        prisma,
        batch.map((b) => b.entry),
      )
        .then(
          (writes) => batch.forEach((b, i) => b.resolve(writes[i]!)),
          (err: unknown) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  };
  return {
    write(entry) {
      return new Promise<InboxWrite>((resolve, reject) => {
        pending.push({ entry, resolve, reject });
        pump();
      });
    },
  };
}

/**
 * The BullMQ job id of an event: the event id itself, unless BullMQ would refuse or misread it
 * (it rejects ':' and all-digit custom ids), then a digest of it. Either way one id per event.
 */
export function webhookJobId(eventId: string): string {
  return /^(?!\d+$)[\w.-]{1,200}$/.test(eventId) ? eventId : `wh-${createHash('sha256').update(eventId).digest('hex')}`;
}

/**
 * Queues processing jobs (job id = event id, so asking twice queues one job). A finished job kept
 * under that id (removeOnComplete/removeOnFail history) is removed first, so a replay or the
 * reconciler can drive the event again; the worker makes a job for a settled event a no-op.
 */
export async function enqueueWebhookEvents(queues: QueueRegistry, eventIds: readonly string[]): Promise<void> {
  const queue = queues.get('webhook-inbox');
  for (const eventId of eventIds) {
    const jobId = webhookJobId(eventId);
    const existing = await queue.getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') continue;
      await existing.remove().catch(() => undefined);
    }
    await queue.add('process', { eventId }, { ...WEBHOOK_JOB_OPTIONS, jobId });
  }
}

/** The request path's enqueue: one Redis call; BullMQ ignores an add under a live job's id. */
export async function enqueueNewWebhookEvent(queues: QueueRegistry, eventId: string): Promise<void> {
  await queues.get('webhook-inbox').add('process', { eventId }, { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(eventId) });
}
