import { describe, expect, it } from 'vitest';
import { budget, runFailpointScenario, runHangScenario, withRig, type CrashRig } from './harness.js';
import { expectCrashSafe } from './expectations.js';

/**
 * SIGKILL around confirm-order: before it is sent, after the provider took the payment but
 * before the answer arrived, and after the codes arrived but before they were stored. A confirm
 * is only ever repeated with the same transaction_id, never paid twice, and an order whose codes
 * may be lost ends in needs_attention with the transaction_id support recovers them with. Each
 * scenario has its own database, Redis prefix and sandbox, so they run concurrently (most of
 * their time is the pipeline's back-off between repeated confirms).
 */
describe.concurrent('crash windows around confirm-order (gateway as a child process)', () => {
  const paidWithoutCodes = async (rig: CrashRig) => {
    const paid = new Set(rig.sandbox.state.confirmations.map((c) => c.transactionId));
    const orders = await rig.prisma.order.findMany({ include: { cards: true } });
    return orders.filter((o) => o.transactionId && paid.has(o.transactionId) && o.cards.length === 0);
  };

  it('(d) killed after "confirming" is committed, before confirm is sent: the confirm is sent after restart, once', { timeout: budget(120_000) }, () =>
    withRig(async (rig) => {
      const final = await runFailpointScenario(rig, { failpoints: 'before_confirm=0.3', cycles: 1, ordersPerCycle: 20, spreadMs: 400 });
      const report = await rig.check('(d) before_confirm', { api: final });
      expectCrashSafe(report);
      expect(report.killsByCause['failpoint:before_confirm']).toBeGreaterThan(0);
      // The orders caught in this window sent their confirm only after the restart, once, and got
      // their cards. (Bystanders whose confirm was answered when the process died are window (f).)
      const resumed = await rig.prisma.order.findMany({ where: { status: 'fulfilled', confirmAttempts: { gt: 1 } } });
      expect(resumed.length).toBeGreaterThan(0);
      for (const order of resumed) {
        const sent = rig.sandbox.state.calls.filter((c) => c.endpoint === 'confirm-order' && c.transactionId === order.transactionId);
        expect(sent).toHaveLength(1);
        expect(rig.sandbox.state.rejectedConfirms.filter((c) => c.transactionId === order.transactionId)).toEqual([]);
      }
    }));

  it('(e) killed while the provider holds a payment whose answer never came: needs_attention with the transaction_id', { timeout: budget(150_000) }, () =>
    withRig(async (rig) => {
      const final = await runHangScenario(rig, { endpoint: 'confirm-order', event: 'confirmation.committed', cycles: 1, ordersPerCycle: 20, spreadMs: 400, settleMs: 90_000 });
      const report = await rig.check('(e) confirm committed, answer lost', { api: final });
      expectCrashSafe(report);
      expect(report.killsByCause['confirmation.committed (hang)']).toBeGreaterThan(0);
      const lost = await paidWithoutCodes(rig);
      expect(lost.length).toBeGreaterThan(0);
      for (const order of lost) {
        // The repeated confirm (same transaction_id) was refused: support recovers the cards with the id.
        expect(order.status).toBe('needs_attention');
        expect(order.transactionId).toMatch(/^TXN-/);
        expect(order.statusDetail).toMatch(/^confirm_/);
        expect(rig.sandbox.state.rejectedConfirms.filter((c) => c.transactionId === order.transactionId).length).toBeGreaterThan(0);
      }
    }));

  it('(f) killed after the codes arrived, before they were stored: needs_attention with the transaction_id', { timeout: budget(150_000) }, () =>
    withRig(async (rig) => {
      const final = await runFailpointScenario(rig, { failpoints: 'after_confirm_answer=0.3', cycles: 1, ordersPerCycle: 20, spreadMs: 400, settleMs: 90_000 });
      const report = await rig.check('(f) after_confirm_answer (reconfirm=fail)', { api: final });
      expectCrashSafe(report);
      expect(report.killsByCause['failpoint:after_confirm_answer']).toBeGreaterThan(0);
      expect(report.paidAnswersUnstored).toBeGreaterThan(0);
      for (const order of await paidWithoutCodes(rig)) {
        expect(order.status).toBe('needs_attention');
        expect(order.transactionId).toMatch(/^TXN-/);
      }
    }));

  it('(f′) the same window with a provider that answers a repeated confirm with the same cards: fulfilled, paid once', { timeout: budget(150_000) }, () =>
    withRig(async (rig) => {
      rig.sandbox.control.setBehaviour({ reconfirm: 'same-cards' });
      const final = await runFailpointScenario(rig, { failpoints: 'after_confirm_answer=0.3', cycles: 1, ordersPerCycle: 20, spreadMs: 400, settleMs: 90_000 });
      const report = await rig.check('(f2) after_confirm_answer (reconfirm=same-cards)', { api: final });
      expectCrashSafe(report);
      expect(report.killsByCause['failpoint:after_confirm_answer']).toBeGreaterThan(0);
      expect(await paidWithoutCodes(rig)).toEqual([]);
      // The replays answered the lost codes again; each transaction was still paid once.
      expect(rig.sandbox.state.confirmations.filter((c) => c.replay).length).toBeGreaterThan(0);
    }));
});
