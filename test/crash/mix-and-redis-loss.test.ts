import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { budget, confirmations, finalRun, REAL_TIME, runFailpointScenario, withRig } from './harness.js';
import { expectCrashSafe } from './expectations.js';

/**
 * (g) Every failpoint at once over several kill/restart cycles, and Redis losing its data
 * (FLUSHALL, a restart without persistence) while orders are in flight. FLUSHALL itself would
 * wipe every other test's keys on the shared Redis, so the test deletes exactly this gateway's
 * keys (`${prefix}:*`), which is all a FLUSHALL means to it. Each scenario has its own database,
 * Redis prefix and sandbox, so they run concurrently.
 */
describe.concurrent('random crashes, and Redis losing its data (gateway as a child process)', () => {
  it('(g) several SIGKILLs at random failpoints: every order settles, no reservation lost, nothing paid twice', { timeout: budget(180_000) }, () =>
    withRig(async (rig) => {
      const final = await runFailpointScenario(rig, {
        // Later points get more weight: every order passes the earlier ones first.
        failpoints: 'before_initiate=0.03,after_initiate_answer=0.04,before_confirm=0.06,after_confirm_answer=0.08,after_settle=0.1',
        cycles: 3,
        ordersPerCycle: 12,
        // Spread out, so the orders are at different steps when the process dies.
        spreadMs: 1_500,
        settleMs: 90_000,
      });
      const report = await rig.check('(g) random mix', { api: final });
      expectCrashSafe(report);
      expect(report.kills).toBeGreaterThanOrEqual(3);
    }));


  it('(redis) re-queues every unsettled order after the keys vanish under a live gateway, and after a crash with no Redis data', { timeout: budget(150_000) }, () =>
    withRig(async (rig) => {
      rig.sandbox.control.setFaults({ latencyMs: 50 });

      // 1. The keys vanish while the gateway runs: queued jobs, delayed retries, active locks.
      // Few workers, so most orders wait in the queue (and lose their job) when the keys vanish.
      let running = await rig.start({ env: { ORDER_WORKER_CONCURRENCY: '3' } });
      const someDone = confirmations(rig, 5);
      await rig.placeOrders(running, 24);
      await someDone;
      expect(await rig.loseRedisData()).toBeGreaterThan(0);
      const openAtLoss = await rig.prisma.order.count({ where: { status: { notIn: ['fulfilled', 'failed', 'needs_attention'] } } });
      expect(await rig.waitSettled(60_000, running.exited)).toBe(true);
      const requeuedLive = running.stdoutLines().filter((l) => l.includes('reconciler re-queued work that had no live job')).length;

      // 2. A crash, then Redis comes back empty; `gateway orders reconcile` rebuilds the queue before the restart.
      const moreDone = confirmations(rig, 5);
      await rig.placeOrders(running, 16);
      await moreDone;
      await rig.kill(running, 'SIGKILL, then Redis lost its data');
      await rig.loseRedisData();
      // In real time, the dead worker's leases must run out before anyone may take its orders.
      if (REAL_TIME) await new Promise((r) => setTimeout(r, 61_000));
      const unsettled = await rig.prisma.order.findMany({ where: { status: { notIn: ['fulfilled', 'failed', 'needs_attention'] } }, select: { id: true } });
      const cli = await rig.cli(['orders', 'reconcile', '--quiet-ms', '0']);
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toContain(`${unsettled.length} re-queued`);
      const queue = new Queue('order-pipeline', { connection: rig.redis, prefix: rig.prefix });
      try {
        for (const { id } of unsettled) expect(await queue.getJobState(id)).toBe('waiting');
      } finally {
        await queue.close();
      }
      running = await finalRun(rig, 60_000);

      const report = await rig.check('(redis) keys lost mid-run, then lost again after a crash', { api: running });
      console.log(
        `[crash] (redis) open orders when the keys vanished: ${openAtLoss}; reconciler re-queue log lines: ${requeuedLive}; ` +
          `unsettled at the crash: ${unsettled.length}; CLI: ${cli.stdout.split('\n')[0] ?? ''}`,
      );
      expectCrashSafe(report);
      expect(openAtLoss).toBeGreaterThan(0);
      expect(requeuedLive).toBeGreaterThan(0);
    }));
});
