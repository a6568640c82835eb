import type { Job } from 'bullmq';
import type { PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { QueuePayloads, QueueRegistry } from '../platform/queues.js';
import type { Redis } from '../platform/redis.js';
import type { Scheduler } from '../platform/scheduler.js';
import type { UpstreamClient } from '../upstream/index.js';
import { syncCatalog, type SyncSummary, type SyncTrigger } from './sync-catalog.js';

export function catalogUpdatedChannel(prefix: string): string {
  return `${prefix}:catalog:updated`;
}

/** BullMQ job ids may not contain ':'; one id per cron slot makes N schedulers enqueue one job. */
export function syncJobId(kind: SyncTrigger, at: Date): string {
  return `catalog-sync-${kind}-${at.toISOString().replace(/[:.]/g, '-')}`;
}

export async function enqueueCatalogSync(queues: QueueRegistry, reason: SyncTrigger, slot: Date): Promise<void> {
  const queue = queues.get('catalog-sync');
  await queue.add('sync', { reason, slot: slot.toISOString() }, { jobId: syncJobId(reason, slot), attempts: 3, backoff: { type: 'exponential', delay: 60_000 } });
}

export interface CatalogWorkerDeps {
  queues: QueueRegistry;
  prisma: PrismaClient;
  upstream: Pick<UpstreamClient, 'getCardList' | 'getCardDetailsList'>;
  log: Logger;
  /** Announces finished syncs so every API instance reloads its cache. */
  publisher: Redis;
  concurrency: number;
}

/** Runs one sync per job; a failed run (vendor list unreachable) throws so BullMQ retries it. */
export async function startCatalogWorker({ queues, prisma, upstream, log, publisher, concurrency }: CatalogWorkerDeps) {
  // One sync at a time across every instance: two overlapping runs would race on the same rows.
  await queues.get('catalog-sync').setGlobalConcurrency(1);
  return queues.worker(
    'catalog-sync',
    async (job: Job<QueuePayloads['catalog-sync']>): Promise<Omit<SyncSummary, 'errors'> & { errors: number }> => {
      const summary = await syncCatalog({ prisma, upstream, log: log.child({ job: job.id }), concurrency }, job.data.reason);
      await publisher.publish(catalogUpdatedChannel(queues.prefix), summary.runId).catch((err: Error) => {
        log.warn({ err: { message: err.message } }, 'could not announce the catalog update; instances reload on their next check');
      });
      if (summary.outcome === 'failed') throw new Error(`catalog sync failed: ${summary.errors[0]?.message ?? 'unknown'}`);
      return { ...summary, errors: summary.errors.length };
    },
    { concurrency: 1 },
  );
}

/**
 * The scheduler role's part: the daily cron slot, and a sync at start when the catalog is empty
 * or older than `maxAgeMs`. The start-up job id is bucketed by ten minutes so instances that
 * start together enqueue one sync.
 */
export async function scheduleCatalogSync(opts: {
  scheduler: Scheduler;
  queues: QueueRegistry;
  prisma: PrismaClient;
  log: Logger;
  cron: string;
  maxAgeMs: number;
  now?: () => Date;
}): Promise<{ syncedAtStart: boolean }> {
  const { scheduler, queues, prisma, log, cron, maxAgeMs, now = () => new Date() } = opts;
  scheduler.every('catalog-sync', cron, (slot) => enqueueCatalogSync(queues, 'schedule', slot));
  const last = await prisma.catalogSyncRun.findFirst({
    where: { outcome: { in: ['succeeded', 'partial'] } },
    orderBy: { finishedAt: 'desc' },
    select: { finishedAt: true },
  });
  const vendors = await prisma.vendor.count();
  const at = now();
  const age = last?.finishedAt ? at.getTime() - last.finishedAt.getTime() : Number.POSITIVE_INFINITY;
  if (vendors > 0 && (maxAgeMs === 0 || age <= maxAgeMs)) return { syncedAtStart: false };
  const bucket = new Date(Math.floor(at.getTime() / 600_000) * 600_000);
  await enqueueCatalogSync(queues, 'startup', bucket);
  log.info({ vendors, lastSyncAgeMs: Number.isFinite(age) ? age : null }, 'catalog empty or old: sync queued at start');
  return { syncedAtStart: true };
}
