import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { createApiKeyService } from '../../src/security/api-keys.js';
import { createLogger } from '../../src/platform/logger.js';
import { withRig, type RunningChild } from '../crash/harness.js';
import { logLines, startRole, startedRoles } from './roles.js';

/**
 * Issue 9, scale-out: every role as its own `gateway serve --role …` process (two workers, two
 * schedulers, an API, and two more APIs with a tiny rate limit), all on one PostgreSQL database
 * and one Redis key prefix, against a sandbox in this process (test/crash/harness.ts).
 *
 * - Orders are processed once: one reservation and one (non-replay) confirmation per order at the
 *   provider, one 'order settled' line per order across both workers, and both workers did work.
 * - One catalog sync per cron slot although two schedulers fire every slot (job id per slot).
 * - Rate limits are shared: with RATE_LIMIT_MAX=5 on two API processes, the 6th request of one
 *   key, whichever process gets it, is refused with 429.
 */
const ORDERS = 60;
const SLOT_MS = 3_000;
const CRON = '*/3 * * * * *';
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('scale-out: api, two workers and two schedulers as separate processes on one database and one Redis', () => {
  it('processes every order once, runs one catalog sync per slot and shares rate limits', { timeout: 120_000 }, () =>
    withRig(async (rig) => {
      const t0 = Date.now();
      // Some provider latency, so the two workers' jobs overlap in time.
      rig.sandbox.control.setFaults({ latencyMs: 20 });
      const [schedulerA, schedulerB, workerA, workerB, api, limitedA, limitedB] = await Promise.all([
        startRole(rig, ['scheduler'], { CATALOG_SYNC_CRON: CRON }),
        startRole(rig, ['scheduler'], { CATALOG_SYNC_CRON: CRON }),
        // Modest concurrency: neither worker can take the whole burst alone.
        startRole(rig, ['worker'], { ORDER_WORKER_CONCURRENCY: '8' }),
        startRole(rig, ['worker'], { ORDER_WORKER_CONCURRENCY: '8' }),
        startRole(rig, ['api']),
        startRole(rig, ['api'], { RATE_LIMIT_MAX: '5' }),
        startRole(rig, ['api'], { RATE_LIMIT_MAX: '5' }),
      ]);
      const started = Date.now();
      expect(startedRoles(schedulerA)).toEqual(['scheduler']);
      expect(startedRoles(workerA)).toEqual(['worker']);
      expect(startedRoles(api)).toEqual(['api']);
      expect(new Set([schedulerA, schedulerB, workerA, workerB, api, limitedA, limitedB].map((c) => c.pid)).size).toBe(7);

      // --- Shared rate limit: one key, two API processes, RATE_LIMIT_MAX=5 each.
      const { key } = await createApiKeyService({ prisma: rig.prisma, log: createLogger('silent') }).create(`${rig.prefix}-limited`, ['catalog:read']);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const target = i % 2 === 0 ? limitedA : limitedB;
        const res = await fetch(`${target.url}/v1/catalog/vendors`, { headers: { authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      console.log(`[scale] rate limit (max 5, alternating two API processes): ${statuses.join(' ')}`);
      // Alone, each process would have let through 5; together they let through 5.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);

      // --- Orders through one API, processed by two workers.
      await rig.placeOrders(api, ORDERS);
      await rig.retryUnacknowledged(api);
      expect(await rig.waitSettled(45_000)).toBe(true);
      const settledAfter = Date.now() - started;

      const report = await rig.check('scale-out', { api });
      expect(report.violations).toEqual([]);
      expect(report).toMatchObject({ orders: ORDERS, fulfilled: ORDERS, nonTerminal: 0, untraceable: 0, doublePayments: 0, secondReservations: 0 });
      const state = rig.sandbox.state;
      expect(state.reservations.size).toBe(ORDERS);
      const payments = state.confirmations.filter((c) => !c.replay);
      expect(payments).toHaveLength(ORDERS);
      expect(new Set(payments.map((c) => c.transactionId)).size).toBe(ORDERS);
      const rows = await rig.prisma.order.findMany({ select: { transactionId: true } });
      expect(new Set(rows.map((r) => r.transactionId))).toEqual(new Set(payments.map((c) => c.transactionId)));

      // Each order was settled by exactly one worker, and both workers settled some.
      const settledBy = (w: RunningChild) => logLines(w).filter((l) => l.msg === 'order settled').map((l) => String(l.orderId));
      const byA = settledBy(workerA);
      const byB = settledBy(workerB);
      console.log(`[scale] ${ORDERS} orders settled in ${settledAfter} ms: worker ${workerA.pid} settled ${byA.length}, worker ${workerB.pid} settled ${byB.length}`);
      expect(byA.length).toBeGreaterThan(0);
      expect(byB.length).toBeGreaterThan(0);
      expect(byA.length + byB.length).toBe(ORDERS);
      expect(new Set([...byA, ...byB]).size).toBe(ORDERS);

      // --- Catalog sync: let both schedulers fire for at least 5 slots, then stop them.
      const enough = started + 5 * SLOT_MS + 1_000;
      if (Date.now() < enough) await delay(enough - Date.now());
      // SIGTERM, not rig.stop(): the harness's fast-forward after a kill releases every active
      // job's lock, which would hand a sync still running in a worker to the other one.
      for (const s of [schedulerA, schedulerB]) s.child.kill('SIGTERM');
      await Promise.all([schedulerA.exited, schedulerB.exited]);
      // The last slot's sync may still be running in a worker.
      for (let i = 0; i < 50 && (await rig.prisma.catalogSyncRun.count({ where: { outcome: 'running' } })) > 0; i++) await delay(100);
      const runs = await rig.prisma.catalogSyncRun.findMany({ where: { trigger: 'schedule' }, orderBy: { startedAt: 'asc' } });
      const queue = new Queue('catalog-sync', { connection: rig.redis, prefix: rig.prefix });
      let jobs;
      try {
        jobs = (await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed'])).filter((j) => j.data.reason === 'schedule');
      } finally {
        await queue.close();
      }
      const slots = jobs.map((j) => String(j.data.slot));
      const runIdsByJob = jobs.map((j) => (j.returnvalue as { runId?: string } | null)?.runId);
      console.log(
        `[scale] catalog sync: ${runs.length} scheduled run(s), ${jobs.length} job(s) for ${new Set(slots).size} slot(s) ` +
          `from 2 schedulers: ${slots.map((s) => s.slice(11, 19)).join(' ')}`,
      );
      expect(runs.length).toBeGreaterThanOrEqual(4);
      expect(runs.every((r) => r.outcome === 'succeeded')).toBe(true);
      // One job per slot, and each run is the run of exactly one job.
      expect(new Set(slots).size).toBe(jobs.length);
      expect(runs.map((r) => r.id).sort()).toEqual(runIdsByJob.filter((id): id is string => id !== undefined).sort());
      expect(runs.length).toBe(jobs.length);
      // Independently of BullMQ's bookkeeping: no two runs started within one slot.
      const buckets = runs.map((r) => Math.floor(r.startedAt.getTime() / SLOT_MS));
      expect(new Set(buckets).size).toBe(runs.length);
      // Both schedulers were alive through the whole window (each enqueued every slot; BullMQ kept one).
      for (const s of [schedulerA, schedulerB]) expect(logLines(s).some((l) => l.msg === 'scheduled' && l.task === 'catalog-sync')).toBe(true);
      console.log(`[scale] total ${Math.round((Date.now() - t0) / 100) / 10} s`);
    }));
});
