import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalogCache, listenForCatalogUpdates } from '../../src/catalog/catalog-cache.js';
import { catalogUpdatedChannel, enqueueCatalogSync, scheduleCatalogSync, startCatalogWorker } from '../../src/catalog/catalog-jobs.js';
import { createPrisma, type PrismaClient } from '../../src/platform/db.js';
import { createLogger } from '../../src/platform/logger.js';
import type { QueueRegistry } from '../../src/platform/queues.js';
import { createRedis, type Redis } from '../../src/platform/redis.js';
import { createScheduler } from '../../src/platform/scheduler.js';
import { createIsolatedDatabase } from '../helpers/database.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { createTestQueues, type TestQueues } from '../helpers/queues.js';
import { seed, startSandbox, type SandboxWithClient } from '../helpers/sandbox.js';

const log = createLogger('silent');
// A cron slot that will not come round during the test.
const NEVER_DURING_TEST = '0 0 1 1 *';

describe('catalog jobs', () => {
  let db: { url: string; drop: () => Promise<void> };
  let prisma: PrismaClient;
  let testQueues: TestQueues;
  let redis: Redis;
  let queues: QueueRegistry;
  let sandbox: SandboxWithClient;

  beforeAll(async () => {
    db = await createIsolatedDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 4 });
    testQueues = await createTestQueues('cat');
    ({ producer: redis, queues } = testQueues);
    sandbox = await startSandbox({ catalog: seed([{ id: 'A', cards: [{ id: 'A1', amount: '5' }] }, { id: 'B', cards: [{ id: 'B1', amount: '7.5' }] }]) });
  });
  afterAll(async () => {
    await testQueues.close();
    await sandbox.close();
    await prisma.$disconnect();
    await db.drop();
  });

  it('enqueues one job per cron slot however many schedulers ask', async () => {
    const slot = new Date('2026-11-21T03:00:00.000Z');
    await Promise.all([enqueueCatalogSync(queues, 'schedule', slot), enqueueCatalogSync(queues, 'schedule', slot), enqueueCatalogSync(queues, 'schedule', slot)]);
    await enqueueCatalogSync(queues, 'schedule', new Date('2026-11-22T03:00:00.000Z'));
    const jobs = await queues.get('catalog-sync').getJobs(['waiting', 'delayed', 'prioritized']);
    expect(jobs.map((j) => j.data.slot).sort()).toEqual(['2026-11-21T03:00:00.000Z', '2026-11-22T03:00:00.000Z']);
    await queues.get('catalog-sync').drain();
  });

  it('queues a sync at start when the catalog is empty, and runs it in a worker that tells every instance', async () => {
    const scheduler = createScheduler({ log });
    try {
      const first = await scheduleCatalogSync({ scheduler, queues, prisma, log, cron: NEVER_DURING_TEST, maxAgeMs: 3_600_000 });
      expect(first.syncedAtStart).toBe(true);

      // Another API instance, listening for announcements.
      const cache = createCatalogCache({ prisma, log, staleAfterMs: 3_600_000 });
      const subscriber = createRedis(TEST_REDIS_URL, 'subscriber');
      const stop = await listenForCatalogUpdates(subscriber, catalogUpdatedChannel(testQueues.prefix), cache);
      const announced = new Promise<string>((resolve) => subscriber.once('message', (_ch: string, runId: string) => resolve(runId)));
      try {
        const worker = await startCatalogWorker({ queues, prisma, upstream: sandbox.client, log, publisher: redis, concurrency: 2 });
        const completed = new Promise<unknown>((resolve) => worker.once('completed', (_job, result) => resolve(result)));
        expect(await completed).toMatchObject({ outcome: 'succeeded', vendorsSeen: 2, denominationsSeen: 2 });
        const runId = await announced;
        expect((await prisma.catalogSyncRun.findUniqueOrThrow({ where: { id: runId } })).trigger).toBe('startup');
        await expect.poll(() => cache.snapshot.denominationById.size).toBe(2);
        expect(cache.snapshot.denominationById.get('B1')?.unitPrice).toBe('7.5');
      } finally {
        await stop();
        await subscriber.quit();
      }

      // Now fresh: a second start does not queue another sync.
      const second = await scheduleCatalogSync({ scheduler, queues, prisma, log, cron: NEVER_DURING_TEST, maxAgeMs: 3_600_000 });
      expect(second.syncedAtStart).toBe(false);
    } finally {
      await scheduler.stop();
    }
  });

  it('lets BullMQ retry a failed sync (vendor list unreachable) and records the failure', async () => {
    sandbox.sandbox.control.setFaults({ failNext: { 'get-card-list': 4 } });
    const queue = queues.get('catalog-sync');
    const job = await queue.add('sync', { reason: 'manual' }, { attempts: 2, backoff: { type: 'fixed', delay: 10 } });
    await expect.poll(async () => queue.getJobState(job.id!), { timeout: 10_000 }).toBe('completed');
    const runs = await prisma.catalogSyncRun.findMany({ where: { trigger: 'manual' }, orderBy: { startedAt: 'asc' } });
    expect(runs.map((r) => r.outcome)).toEqual(['failed', 'succeeded']);
    expect(runs[0]!.errors).toEqual([expect.objectContaining({ code: 'upstream_10001' })]);
  });
});
