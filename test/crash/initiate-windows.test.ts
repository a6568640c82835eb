import { describe, expect, it } from 'vitest';
import { budget, runFailpointScenario, runHangScenario, withRig } from './harness.js';
import { expectCrashSafe } from './expectations.js';

/**
 * SIGKILL around initiate-card-request: before it is sent, after the provider committed the
 * reservation but before the answer arrived, and after the answer but before the transaction_id
 * is committed. After a restart every order settles, and every reservation the provider made is
 * traceable to an order whose detail tells support what is unknown. Each scenario has its own
 * database, Redis prefix and sandbox, so they run concurrently.
 */
describe.concurrent('crash windows around initiate-card-request (gateway as a child process)', () => {
  it('(a) killed before initiate is sent: the orders found "reserving" are escalated, nothing is reserved twice', { timeout: budget(120_000) }, () =>
    withRig(async (rig) => {
      const final = await runFailpointScenario(rig, { failpoints: 'before_initiate=0.3', cycles: 1, ordersPerCycle: 20, spreadMs: 400 });
      const report = await rig.check('(a) before_initiate', { api: final });
      expectCrashSafe(report);
      expect(report.killsByCause['failpoint:before_initiate']).toBeGreaterThan(0);
      // Orders stopped in this window never reached the provider, yet their outcome is unknown to
      // the restarted gateway: they wait for support with their transaction_number.
      // Other orders in flight at the kill can be in other windows (a confirm whose answer was
      // lost), so at least one must be this window's, and every one must say what is unknown.
      const unknown = await rig.prisma.order.findMany({ where: { status: 'needs_attention' } });
      expect(unknown.some((o) => o.statusDetail?.startsWith('initiate_outcome_unknown'))).toBe(true);
      for (const order of unknown) expect(order.statusDetail).toMatch(/^(initiate|confirm)_outcome_unknown/);
    }));

  it('(b) killed while the provider holds a committed reservation whose answer never came', { timeout: budget(120_000) }, () =>
    withRig(async (rig) => {
      const final = await runHangScenario(rig, { endpoint: 'initiate-card-request', event: 'reservation.committed', cycles: 1, ordersPerCycle: 20, spreadMs: 400 });
      const report = await rig.check('(b) initiate committed, answer lost', { api: final });
      expectCrashSafe(report);
      expect(report.killsByCause['reservation.committed (hang)']).toBeGreaterThan(0);
      // The provider's unanswered reservations belong to orders waiting for support with their number.
      const orphans = [...rig.sandbox.state.reservations.values()].filter((r) => r.status === 'pending');
      expect(orphans.length).toBeGreaterThan(0);
      for (const r of orphans) {
        const order = await rig.prisma.order.findUniqueOrThrow({ where: { transactionNumber: BigInt(r.transactionNumber) } });
        expect(order).toMatchObject({ status: 'needs_attention', transactionId: null });
        expect(order.statusDetail).toMatch(/^initiate_outcome_unknown/);
      }
    }));

  it('(c) killed after the initiate answer, before the transaction_id is committed', { timeout: budget(120_000) }, () =>
    withRig(async (rig) => {
      const final = await runFailpointScenario(rig, { failpoints: 'after_initiate_answer=0.3', cycles: 1, ordersPerCycle: 20, spreadMs: 400 });
      const report = await rig.check('(c) after_initiate_answer', { api: final });
      expectCrashSafe(report);
      expect(report.killsByCause['failpoint:after_initiate_answer']).toBeGreaterThan(0);
      // The answer was lost with the process: at least that reservation waits for support.
      const pending = [...rig.sandbox.state.reservations.values()].filter((r) => r.status === 'pending');
      expect(pending.length).toBeGreaterThan(0);
      for (const r of pending) {
        const order = await rig.prisma.order.findUniqueOrThrow({ where: { transactionNumber: BigInt(r.transactionNumber) } });
        expect(order.status).toBe('needs_attention');
      }
    }));
});
