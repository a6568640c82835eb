/**
 * The chaos suite (`npm run chaos`, i.e. `tsx chaos/run.ts`): each scenario runs the gateway as
 * separate processes (API, two workers, a scheduler) against its own database, Redis key prefix
 * and in-process provider sandbox (test/crash/harness.ts), breaks something while orders flow,
 * lets everything settle, and counts. One table at the end; the exit code is 1 when a
 * must-be-zero figure is not zero, an order is left unsettled, or a scenario could not run.
 *
 *   CHAOS_ORDERS=100                 orders per scenario
 *   CHAOS_ONLY=redis,token           run only scenarios whose name contains one of these
 *   CHAOS_ALLOW_REDIS_RESTART=1      also restart the machine's Redis (shared: see docs/chaos.md)
 *   CHAOS_ALLOW_PG_RESTART=1         also restart the machine's PostgreSQL cluster 15/main
 */
import { withRig, type ScenarioReport } from '../test/crash/harness.js';
import prepareTestDatabases from '../test/global-setup.js';
import { CHAOS_ONLY, CHAOS_ORDERS } from './options.js';
import { scanForPlaintext, type PlaintextScan } from './plaintext.js';
import { SCENARIOS, type ScenarioContext } from './scenarios.js';

const ORDERS = CHAOS_ORDERS;
const ONLY = CHAOS_ONLY;

interface Row {
  scenario: string;
  status: 'ok' | 'FAIL' | 'skipped' | 'error';
  accepted?: number;
  fulfilled?: number;
  failed?: number;
  needsAttention?: number;
  unsettled?: number;
  untraceable?: number;
  doubleConfirmations?: number;
  plaintext?: number;
  violations?: number;
  seconds?: number;
  notes: string[];
}

async function runScenario(scenario: (typeof SCENARIOS)[number]): Promise<Row> {
  const skip = scenario.skip?.();
  if (skip) return { scenario: scenario.name, status: 'skipped', notes: [`skipped: ${skip}`] };
  const t0 = Date.now();
  const notes: string[] = [];
  console.log(`\n=== ${scenario.name} (${ORDERS} orders)`);
  try {
    return await withRig(async (rig) => {
      const ctx: ScenarioContext = { rig, orders: ORDERS, note: (t) => notes.push(t) };
      await scenario.run(ctx);
      const report: ScenarioReport = await rig.check(scenario.name, ctx.topology ? { api: ctx.topology.api } : {});
      const scan: PlaintextScan = await scanForPlaintext(rig, ctx.topology?.logs() ?? '');
      notes.push(
        `plaintext scan: ${scan.codes} issued codes against ${scan.dbRows} database rows, ${scan.redisKeys} Redis keys, ${Math.round(scan.logBytes / 1024)} KiB of logs` +
          (scan.found.length > 0 ? `; FOUND in ${[...new Set(scan.found.map((f) => f.where))].join(', ')}` : ''),
      );
      for (const v of report.violations.slice(0, 10)) notes.push(`violation: ${v}`);
      if (report.violations.length > 10) notes.push(`… ${report.violations.length - 10} more violations`);
      const accepted = rig.orders.filter((o) => o.orderId).length;
      const unsettled = report.nonTerminal + (rig.orders.length - accepted);
      const bad = unsettled > 0 || report.untraceable > 0 || report.doublePayments > 0 || scan.found.length > 0 || report.violations.length > 0;
      return {
        scenario: scenario.name,
        status: bad ? 'FAIL' : 'ok',
        accepted,
        fulfilled: report.fulfilled,
        failed: report.failed,
        needsAttention: report.needsAttention,
        unsettled,
        untraceable: report.untraceable,
        doubleConfirmations: report.doublePayments,
        plaintext: scan.found.length,
        violations: report.violations.length,
        seconds: Math.round((Date.now() - t0) / 1000),
        notes,
      };
    });
  } catch (err) {
    notes.push(`error: ${(err as Error).message.split('\n').slice(0, 3).join(' ')}`);
    return { scenario: scenario.name, status: 'error', seconds: Math.round((Date.now() - t0) / 1000), notes };
  }
}

function table(rows: Row[]): string {
  const head = ['scenario', 'accepted', 'fulfilled', 'failed', 'needs_attention', 'unsettled', 'untraceable reservations', 'double confirmations', 'plaintext codes found', 'invariant violations', 'duration', 'result'];
  const cell = (v: number | undefined) => (v === undefined ? '-' : String(v));
  const body = rows.map((r) => [
    r.scenario,
    cell(r.accepted),
    cell(r.fulfilled),
    cell(r.failed),
    cell(r.needsAttention),
    cell(r.unsettled),
    cell(r.untraceable),
    cell(r.doubleConfirmations),
    cell(r.plaintext),
    cell(r.violations),
    r.seconds === undefined ? '-' : `${r.seconds} s`,
    r.status,
  ]);
  const lines = [head, head.map(() => '---'), ...body].map((cols) => `| ${cols.join(' | ')} |`);
  return lines.join('\n');
}

const selected = SCENARIOS.filter((s) => ONLY.length === 0 || ONLY.some((o) => s.name.toLowerCase().includes(o)));
// The migrated template each scenario's database is cloned from, as `npm test` prepares it.
await prepareTestDatabases();
const rows: Row[] = [];
for (const scenario of selected) {
  const row = await runScenario(scenario);
  rows.push(row);
  console.log(`--- ${row.scenario}: ${row.status}${row.notes.length > 0 ? `\n    ${row.notes.join('\n    ')}` : ''}`);
}

console.log(`\nChaos suite, ${ORDERS} orders per scenario (must be 0: unsettled, untraceable reservations, double confirmations, plaintext codes found, invariant violations)\n`);
console.log(table(rows));
console.log('');
for (const row of rows) for (const note of row.notes) console.log(`- ${row.scenario}: ${note}`);
const failed = rows.filter((r) => r.status === 'FAIL' || r.status === 'error');
if (failed.length > 0) {
  console.log(`\n${failed.length} scenario(s) failed: ${failed.map((r) => r.scenario).join(', ')}`);
  process.exitCode = 1;
}
// Whatever a scenario left open (a hung provider socket, a reconnecting client) does not keep the run alive.
process.exit(process.exitCode ?? 0);
