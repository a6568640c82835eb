/**
 * Crash-test harness: the gateway runs as a child process (`gateway serve` from the TypeScript
 * sources) against an isolated database, this test's own Redis key prefix, and a provider
 * sandbox that runs in the test process, so the test can watch the provider's commits as they
 * happen and SIGKILL the gateway at the exact moment it wants. Afterwards the sandbox's state is
 * the ground truth the gateway's database is checked against.
 *
 * Time fast-forward (after a kill): a dead worker's order leases (60 s) and BullMQ job locks
 * (60 s, then a 30 s stalled check) keep its orders from being picked up for 60-90 s, by design:
 * nothing can tell a dead worker from a slow one sooner. To keep the suite short, `kill()` moves
 * that clock forward for the dead process only: its leases are expired in PostgreSQL and its
 * active jobs are marked stalled without a lock, which is exactly what those 60-90 s would do.
 * CRASH_REAL_TIME=1 skips this and waits for real (each recovery then takes ~1.5 minutes).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { syncCatalog } from '../../src/catalog/sync-catalog.js';
import { SANDBOX_DEFAULT_PRIVATE_KEY, SANDBOX_DEFAULT_USERNAME } from '../../src/config/index.js';
import { createPrisma, type PrismaClient } from '../../src/platform/db.js';
import { createLogger } from '../../src/platform/logger.js';
import { createRedis, waitForRedis, type Redis } from '../../src/platform/redis.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createApiKeyService } from '../../src/security/api-keys.js';
import { createCardVault, type CardVault } from '../../src/security/card-vault.js';
import { createUpstreamClient } from '../../src/upstream/index.js';
import { runGateway, startGateway, waitForLog, type CliResult } from '../helpers/cli.js';
import { createIsolatedDatabase } from '../helpers/database.js';
import { TEST_REDIS_URL, uniqueId } from '../helpers/env.js';
import { seed } from '../helpers/sandbox.js';

export const REAL_TIME = process.env.CRASH_REAL_TIME === '1';
/** A test's time budget: longer when dead workers' leases and locks must expire for real. */
export const budget = (ms: number): number => (REAL_TIME ? ms + 300_000 : ms);
const TERMINAL = new Set(['fulfilled', 'failed', 'needs_attention']);

/** Cheap cards with stock no test can exhaust. */
export const CRASH_CATALOG = seed([
  { id: '7', name: 'Crash Vendor', cards: [{ id: '701', amount: '0.10', stock: 100_000 }, { id: '702', amount: '2.50', stock: 100_000 }, { id: '703', amount: '20.50', stock: 100_000 }] },
]);
const CARD_IDS = ['701', '702', '703'];

export interface PlacedOrder {
  idempotencyKey: string;
  body: { cardId: string; quantity: number; reference: string };
  /** Set once the gateway acknowledged it (202/200). */
  orderId?: string;
  lastError?: string;
}

export interface RunningChild {
  child: ChildProcess;
  pid: number;
  /** Empty when a failpoint killed the process before its API listened. */
  url: string;
  /** Resolves with the signal (or exit code) when the process ends. */
  exited: Promise<string>;
  stderr: () => string;
  stdoutLines: () => string[];
}

export interface ScenarioReport {
  scenario: string;
  orders: number;
  fulfilled: number;
  failed: number;
  needsAttention: number;
  nonTerminal: number;
  reservations: number;
  untraceable: number;
  doublePayments: number;
  /** Reservations made for an order number that already had one (a silent second reservation). */
  secondReservations: number;
  /** Paid transactions whose successful answer was written to the gateway but whose codes are not stored. */
  paidAnswersUnstored: number;
  /** Paid transactions (confirmed at the sandbox). */
  paid: number;
  kills: number;
  killsByCause: Record<string, number>;
  seconds: number;
  violations: string[];
}

export interface CrashRig {
  sandbox: Sandbox;
  prisma: PrismaClient;
  redis: Redis;
  prefix: string;
  orders: PlacedOrder[];
  kills: string[];
  /** Runs another `gateway` command to completion with the same environment (e.g. `orders reconcile`). */
  cli(args: string[]): Promise<CliResult>;
  /** Starts `gateway serve`; resolves once it logged 'gateway started'. */
  start(options?: { failpoints?: string; env?: Record<string, string> }): Promise<RunningChild>;
  /** SIGKILL (if still alive), wait for the exit, then fast-forward the dead process's leases and locks. */
  kill(running: RunningChild, cause?: string): Promise<void>;
  /** Ends a child that was not killed by itself: SIGKILL as well (a crash at an arbitrary moment). */
  stop(running: RunningChild): Promise<void>;
  /** POSTs `count` new orders concurrently (each with its own Idempotency-Key); failures are kept for retry. */
  placeOrders(running: RunningChild, count: number, spreadMs?: number): Promise<void>;
  /** POSTs again, with the same key and body, every order the gateway has not acknowledged yet. */
  retryUnacknowledged(running: RunningChild): Promise<void>;
  /** Resolves true when every order in the database is terminal (and every placed order acknowledged), false on timeout or when `until` resolves first. */
  waitSettled(timeoutMs: number, until?: Promise<unknown>): Promise<boolean>;
  /** Deletes this test's Redis keys (SCAN + DEL `${prefix}:*`): Redis losing its data, for this gateway only. */
  loseRedisData(): Promise<number>;
  /** Checks the invariants against the sandbox's state; `api` also reads fulfilled orders through the running gateway. */
  check(scenario: string, options?: { api?: RunningChild }): Promise<ScenarioReport>;
  close(): Promise<void>;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function keyRing(): { env: string; vaultKeys: { id: string; key: Uint8Array }[] } {
  const key = randomBytes(32);
  return { env: `k1:${key.toString('base64')}`, vaultKeys: [{ id: 'k1', key: new Uint8Array(key) }] };
}

export async function createCrashRig(): Promise<CrashRig> {
  const startedAt = Date.now();
  const db = await createIsolatedDatabase();
  const prefix = uniqueId('crash');
  const log = createLogger('silent');
  const prisma = createPrisma({ url: db.url, poolMax: 4, applicationName: 'gateway:crash-test' });
  const redis = createRedis(TEST_REDIS_URL, 'producer', log);
  await waitForRedis(redis);
  const sandbox = await createSandbox({ catalog: CRASH_CATALOG });
  let sandboxUrl: string;
  let apiKey: string;
  try {
    sandboxUrl = await sandbox.listen({ port: 0, host: '127.0.0.1' });
    // The catalog is synced before the gateway starts, so its API serves it from the first request.
    const upstream = createUpstreamClient({ baseUrl: sandboxUrl, username: SANDBOX_DEFAULT_USERNAME, privateKey: SANDBOX_DEFAULT_PRIVATE_KEY, timeoutMs: 5_000, logger: log });
    const synced = await syncCatalog({ prisma, upstream, log }, 'manual');
    await upstream.close();
    if (synced.outcome !== 'succeeded') throw new Error(`catalog sync: ${synced.outcome}`);
    apiKey = (await createApiKeyService({ prisma, log }).create(prefix, ['orders:write', 'orders:read', 'catalog:read'])).key;
  } catch (err) {
    await sandbox.close().catch(() => undefined);
    await redis.quit().catch(() => undefined);
    await prisma.$disconnect().catch(() => undefined);
    await db.drop().catch(() => undefined);
    throw err;
  }
  const ring = keyRing();
  const vault: CardVault = await createCardVault(ring.vaultKeys);
  const callbackSecret = `whsec_${randomBytes(32).toString('base64')}`;

  const children = new Set<RunningChild>();
  const orders: PlacedOrder[] = [];
  const kills: string[] = [];
  let sequence = 0;

  async function post(running: RunningChild, order: PlacedOrder): Promise<void> {
    if (!running.url) {
      order.lastError = 'the gateway died before it listened';
      return;
    }
    try {
      const res = await fetch(`${running.url}/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': order.idempotencyKey, 'content-type': 'application/json' },
        body: JSON.stringify(order.body),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json()) as { id?: string };
      if ((res.status === 202 || res.status === 200) && body.id) {
        if (order.orderId && order.orderId !== body.id) throw new Error(`Idempotency-Key ${order.idempotencyKey} answered two orders: ${order.orderId} and ${body.id}`);
        order.orderId = body.id;
        delete order.lastError;
      } else {
        order.lastError = `HTTP ${res.status}: ${JSON.stringify(body)}`;
      }
    } catch (err) {
      if ((err as Error).message.startsWith('Idempotency-Key')) throw err;
      order.lastError = (err as Error).message;
    }
  }

  async function expireDeadLeases(pid: number): Promise<void> {
    // Worker ids are `${hostname}:${pid}:${random}` (src/serve.ts).
    await prisma.$executeRaw`UPDATE orders SET lease_until = now() - interval '1 second' WHERE lease_owner LIKE ${`%:${pid}:%`}`;
  }

  /** What BullMQ's lock expiry and first stalled check would do to the dead worker's active jobs. */
  async function releaseDeadJobs(): Promise<void> {
    const actives: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*:active`, 'COUNT', 500);
      cursor = next;
      actives.push(...keys);
    } while (cursor !== '0');
    for (const activeKey of actives) {
      const base = activeKey.slice(0, -'active'.length); // `${prefix}:${queue}:`
      const ids = await redis.lrange(activeKey, 0, -1);
      if (ids.length === 0) continue;
      await redis.del(...ids.map((id) => `${base}${id}:lock`));
      await redis.sadd(`${base}stalled`, ...ids);
      await redis.del(`${base}stalled-check`);
    }
  }

  const baseEnv = (): Record<string, string> => ({
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    PORT: '0',
    UPSTREAM_BASE_URL: sandboxUrl,
    UPSTREAM_USERNAME: SANDBOX_DEFAULT_USERNAME,
    UPSTREAM_PRIVATE_KEY: SANDBOX_DEFAULT_PRIVATE_KEY,
    UPSTREAM_TIMEOUT_MS: '5000',
    CARD_CODE_KEYS: ring.env,
    CALLBACK_SIGNING_SECRET: callbackSecret,
    LOG_LEVEL: 'info',
    RECONCILE_INTERVAL_MS: '500',
    RATE_LIMIT_MAX: '100000',
  });

  const rig: CrashRig = {
    sandbox,
    prisma,
    redis,
    prefix,
    orders,
    kills,

    cli(args) {
      return runGateway(args, baseEnv());
    },

    async start({ failpoints, env = {} } = {}) {
      const t0 = Date.now();
      const child = startGateway(['serve'], {
        ...baseEnv(),
        ...(failpoints ? { GATEWAY_FAILPOINTS: failpoints } : {}),
        ...env,
      });
      let stderr = '';
      const lines: string[] = [];
      let partial = '';
      child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
      child.stdout!.on('data', (d: Buffer) => {
        const parts = (partial + d.toString()).split('\n');
        partial = parts.pop() ?? '';
        lines.push(...parts);
        if (lines.length > 2_000) lines.splice(0, lines.length - 2_000);
      });
      const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `exit ${String(code)}`)));
      let url = '';
      try {
        url = String((await waitForLog(child, (l) => l.msg === 'gateway started', 60_000)).url);
      } catch (err) {
        // A failpoint may fire before the API listens: the worker starts first and picks up
        // the orders an earlier run left. That is one more crash, not a failed start.
        if (!/failpoint \w+: killing the process/.test(stderr)) {
          child.kill('SIGKILL');
          throw new Error(`gateway did not start: ${(err as Error).message}\n${stderr.slice(-3_000)}`);
        }
      }
      if (process.env.CRASH_DEBUG) console.log(`[crash-debug] ${prefix} start took ${Date.now() - t0} ms${url ? '' : ' (died at start)'}`);
      const running: RunningChild = { child, pid: child.pid!, url, exited, stderr: () => stderr, stdoutLines: () => lines };
      children.add(running);
      return running;
    },

    async kill(running, cause) {
      if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGKILL');
      await running.exited;
      children.delete(running);
      const failpoint = /failpoint (\w+): killing the process/.exec(running.stderr())?.[1];
      kills.push(failpoint ? `failpoint:${failpoint}` : (cause ?? 'test'));
      if (!REAL_TIME) {
        await expireDeadLeases(running.pid);
        await releaseDeadJobs();
      }
    },

    async stop(running) {
      await rig.kill(running, 'end of cycle');
    },

    async placeOrders(running, count, spreadMs = 0) {
      const batch: PlacedOrder[] = [];
      for (let i = 0; i < count; i++) {
        sequence++;
        batch.push({
          idempotencyKey: `${prefix}-${sequence}`,
          body: { cardId: CARD_IDS[sequence % CARD_IDS.length]!, quantity: 1 + (sequence % 3), reference: `crash-${sequence}` },
        });
      }
      orders.push(...batch);
      // Spread out, orders are at different steps when the process dies; at once, they move in step.
      await Promise.all(batch.map(async (o, i) => {
        if (spreadMs > 0) await delay((spreadMs * i) / count);
        await post(running, o);
      }));
    },

    async retryUnacknowledged(running) {
      for (let attempt = 0; attempt < 5; attempt++) {
        const pending = orders.filter((o) => !o.orderId);
        if (pending.length === 0) return;
        await Promise.all(pending.map((o) => post(running, o)));
        if (orders.every((o) => o.orderId)) return;
        await delay(200);
      }
      const still = orders.filter((o) => !o.orderId);
      if (still.length > 0) throw new Error(`${still.length} order(s) never acknowledged, e.g. ${still[0]!.idempotencyKey}: ${still[0]!.lastError ?? ''}`);
    },

    async waitSettled(timeoutMs, until) {
      const deadline = Date.now() + timeoutMs;
      let done = false;
      void until?.then(() => (done = true));
      while (!done && Date.now() < deadline) {
        const open = await prisma.order.count({ where: { status: { notIn: ['fulfilled', 'failed', 'needs_attention'] } } });
        if (open === 0 && orders.every((o) => o.orderId)) return true;
        await delay(100);
      }
      return false;
    },

    async loseRedisData() {
      let cursor = '0';
      let deleted = 0;
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) deleted += await redis.del(...keys);
      } while (cursor !== '0');
      return deleted;
    },

    async check(scenario, { api } = {}) {
      const violations: string[] = [];
      const rows = await prisma.order.findMany({ include: { cards: { orderBy: { position: 'asc' } } }, orderBy: { transactionNumber: 'asc' } });
      const state = sandbox.state;
      const reservations = [...state.reservations.values()];
      const byNumber = new Map(rows.map((o) => [Number(o.transactionNumber), o]));
      const byTransactionId = new Map(rows.filter((o) => o.transactionId).map((o) => [o.transactionId!, o]));

      // Every placed order exists once, under the id its Idempotency-Key was answered with.
      for (const placed of orders) {
        if (!placed.orderId) violations.push(`order ${placed.idempotencyKey} was never acknowledged (${placed.lastError ?? ''})`);
        else if (!rows.some((o) => o.id === placed.orderId)) violations.push(`acknowledged order ${placed.orderId} is not in the database`);
      }
      if (rows.length !== orders.length) violations.push(`${rows.length} orders in the database for ${orders.length} Idempotency-Keys`);

      // Every reservation is traceable to an order, one reservation per transaction_number, none for a failed order.
      let untraceable = 0;
      let secondReservations = 0;
      const perNumber = new Map<number, number>();
      for (const r of reservations) {
        perNumber.set(r.transactionNumber, (perNumber.get(r.transactionNumber) ?? 0) + 1);
        const order = byTransactionId.get(r.transactionId) ?? byNumber.get(r.transactionNumber);
        if (!order) {
          untraceable++;
          violations.push(`reservation ${r.transactionId} (transaction_number ${r.transactionNumber}, ${r.status}) matches no order`);
          continue;
        }
        if (order.status === 'failed') violations.push(`order ${order.id} is failed ("nothing reserved") but the provider holds reservation ${r.transactionId} (${r.status})`);
        if (order.transactionId && order.transactionId !== r.transactionId) {
          violations.push(`order ${order.id} records ${order.transactionId} but the provider also reserved ${r.transactionId} for transaction_number ${r.transactionNumber}`);
        }
      }
      for (const [number, count] of perNumber) {
        if (count > 1) {
          secondReservations += count - 1;
          violations.push(`transaction_number ${number} was reserved ${count} times`);
        }
      }

      // Paid at most once; every paid transaction is recorded on its order.
      const payments = new Map<string, number>();
      for (const c of state.confirmations) if (!c.replay) payments.set(c.transactionId, (payments.get(c.transactionId) ?? 0) + 1);
      let doublePayments = 0;
      for (const [transactionId, count] of payments) {
        if (count > 1) {
          doublePayments++;
          violations.push(`transaction ${transactionId} was paid ${count} times`);
        }
        if (!byTransactionId.has(transactionId)) violations.push(`paid transaction ${transactionId} is recorded on no order (support could not recover its cards)`);
      }

      // Terminal; needs_attention orders say what is unknown; cards match the provider's.
      let paidAnswersUnstored = 0;
      const answered = new Set(
        state.calls.filter((c) => c.endpoint === 'confirm-order' && c.outcome === 'answered' && c.providerCode === '11111' && c.transactionId).map((c) => c.transactionId!),
      );
      for (const order of rows) {
        if (!TERMINAL.has(order.status)) violations.push(`order ${order.id} is stuck in ${order.status} (${order.statusDetail ?? ''})`);
        const held = order.transactionId ? reservations.filter((r) => r.transactionId === order.transactionId) : reservations.filter((r) => r.transactionNumber === Number(order.transactionNumber));
        if (order.status === 'needs_attention') {
          if (!order.statusDetail) violations.push(`needs_attention order ${order.id} does not say what is unknown`);
          if (held.length > 0 && !order.transactionId && !/initiate/.test(order.statusDetail ?? '')) {
            violations.push(`needs_attention order ${order.id} has a reservation at the provider but its detail does not point at the initiate: ${order.statusDetail ?? ''}`);
          }
        }
        if (order.status === 'fulfilled') {
          if (!order.transactionId) violations.push(`fulfilled order ${order.id} has no transaction_id`);
          else if ((payments.get(order.transactionId) ?? 0) !== 1) violations.push(`fulfilled order ${order.id} was paid ${payments.get(order.transactionId) ?? 0} times`);
          if (order.cards.length !== order.quantity) violations.push(`fulfilled order ${order.id} stores ${order.cards.length} cards for quantity ${order.quantity}`);
        }
        if (order.cards.length > 0 || order.status === 'fulfilled') {
          const issued = order.transactionId ? sandbox.control.cardsOf(order.transactionId) : [];
          const stored = order.cards.map((c) => ({
            cardCode: vault.decrypt({ orderId: order.id, position: c.position, keyId: c.keyId, nonce: c.nonce, ciphertext: c.ciphertext }),
            cardNumber: c.cardNumber,
          }));
          if (JSON.stringify(stored) !== JSON.stringify(issued.map((c) => ({ cardCode: c.cardCode, cardNumber: c.cardNumber })))) {
            violations.push(`order ${order.id}: the stored cards (${stored.length}) are not the provider's cards for ${order.transactionId ?? '(no transaction_id)'} (${issued.length})`);
          }
        }
        if (order.transactionId && answered.has(order.transactionId) && order.cards.length === 0) {
          paidAnswersUnstored++;
          if (order.status !== 'needs_attention') violations.push(`order ${order.id} received its codes but stored none and is ${order.status}`);
        }
      }

      // What a storefront reads back matches the provider's cards.
      if (api) {
        for (const order of rows.filter((o) => o.status === 'fulfilled')) {
          const res = await fetch(`${api.url}/v1/orders/${order.id}`, { headers: { authorization: `Bearer ${apiKey}` } });
          const view = (await res.json()) as { status: string; cards: { code: string; number: string }[] | null };
          const issued = sandbox.control.cardsOf(order.transactionId!).map((c) => ({ code: c.cardCode, number: c.cardNumber }));
          if (res.status !== 200 || JSON.stringify(view.cards) !== JSON.stringify(issued)) violations.push(`GET /v1/orders/${order.id} does not answer the provider's cards`);
        }
      }

      const killsByCause: Record<string, number> = {};
      for (const k of kills) killsByCause[k] = (killsByCause[k] ?? 0) + 1;
      const report: ScenarioReport = {
        scenario,
        orders: rows.length,
        fulfilled: rows.filter((o) => o.status === 'fulfilled').length,
        failed: rows.filter((o) => o.status === 'failed').length,
        needsAttention: rows.filter((o) => o.status === 'needs_attention').length,
        nonTerminal: rows.filter((o) => !TERMINAL.has(o.status)).length,
        reservations: reservations.length,
        untraceable,
        doublePayments,
        secondReservations,
        paidAnswersUnstored,
        paid: payments.size,
        kills: kills.length,
        killsByCause,
        seconds: Math.round((Date.now() - startedAt) / 100) / 10,
        violations,
      };
      const details = rows
        .filter((o) => o.status === 'needs_attention')
        .reduce<Record<string, number>>((acc, o) => {
          const reason = (o.statusDetail ?? '').split(':')[0]!;
          acc[reason] = (acc[reason] ?? 0) + 1;
          return acc;
        }, {});
      console.log(
        `[crash] ${scenario}: orders=${report.orders} fulfilled=${report.fulfilled} failed=${report.failed} needs_attention=${report.needsAttention} ` +
          `non_terminal=${report.nonTerminal} sandbox_reservations=${report.reservations} untraceable_reservations=${report.untraceable} ` +
          `second_reservations=${report.secondReservations} paid=${report.paid} double_payments=${report.doublePayments} paid_answers_unstored=${report.paidAnswersUnstored} ` +
          `kills=${report.kills} ${JSON.stringify(killsByCause)} needs_attention_by_reason=${JSON.stringify(details)} seconds=${report.seconds}` +
          (violations.length > 0 ? `\n  violations:\n    ${violations.slice(0, 20).join('\n    ')}` : ''),
      );
      return report;
    },

    async close() {
      for (const running of children) {
        running.child.kill('SIGKILL');
        await running.exited;
      }
      children.clear();
      await rig.loseRedisData().catch(() => undefined);
      await redis.quit().catch(() => undefined);
      await prisma.$disconnect().catch(() => undefined);
      await sandbox.close().catch(() => undefined);
      await db.drop().catch(() => undefined);
    },
  };
  return rig;
}

/** Resolves once the rig's sandbox has paid `count` more transactions. */
export function confirmations(rig: CrashRig, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const on = () => {
      if (++seen < count) return;
      rig.sandbox.events.off('confirmation.committed', on);
      resolve();
    };
    rig.sandbox.events.on('confirmation.committed', on);
  });
}

/** Runs `scenario` with its own rig (database, Redis prefix, sandbox) and always cleans up, so scenarios can run concurrently. */
export async function withRig<T>(scenario: (rig: CrashRig) => Promise<T>): Promise<T> {
  const rig = await createCrashRig();
  try {
    return await scenario(rig);
  } finally {
    await rig.close();
  }
}

/**
 * The failpoint scenarios' shape: `cycles` runs of the gateway with failpoints on, each taking a
 * new batch of orders (and the retries of unacknowledged ones) until a failpoint kills it (or all
 * settle, then it is killed anyway); then one clean run that must settle everything.
 */
export async function runFailpointScenario(
  rig: CrashRig,
  options: { failpoints: string; cycles: number; ordersPerCycle: number; settleMs?: number; cycleMs?: number; spreadMs?: number; env?: Record<string, string> },
): Promise<RunningChild> {
  for (let cycle = 0; cycle < options.cycles; cycle++) {
    const running = await rig.start({ failpoints: options.failpoints, ...(options.env ? { env: options.env } : {}) });
    await rig.placeOrders(running, options.ordersPerCycle, options.spreadMs);
    if (running.child.exitCode === null && running.child.signalCode === null) await rig.retryUnacknowledged(running).catch(() => undefined);
    const t0 = Date.now();
    await rig.waitSettled(options.cycleMs ?? 15_000, running.exited);
    if (process.env.CRASH_DEBUG) console.log(`[crash-debug] ${rig.prefix} cycle ${cycle} ran ${Date.now() - t0} ms after placing`);
    await rig.kill(running);
  }
  return finalRun(rig, options.settleMs);
}

/** A run without faults that must bring every order to a terminal status. */
export async function finalRun(rig: CrashRig, settleMs = 60_000): Promise<RunningChild> {
  const running = await rig.start();
  await rig.retryUnacknowledged(running);
  const t0 = Date.now();
  const settled = await rig.waitSettled(REAL_TIME ? Math.max(settleMs, 150_000) : settleMs, running.exited);
  if (process.env.CRASH_DEBUG) console.log(`[crash-debug] ${rig.prefix} final run settled=${settled} in ${Date.now() - t0} ms`);
  if (!settled && running.child.exitCode !== null) throw new Error(`the gateway died in the clean run: ${running.stderr().slice(-2_000)}`);
  return running;
}

/**
 * The event scenarios' shape: the sandbox commits the work but never answers (afterCommit hang),
 * and the gateway is SIGKILLed the moment the sandbox emits `event`.
 */
export async function runHangScenario(
  rig: CrashRig,
  options: { endpoint: 'initiate-card-request' | 'confirm-order'; event: 'reservation.committed' | 'confirmation.committed'; cycles: number; ordersPerCycle: number; settleMs?: number; spreadMs?: number },
): Promise<RunningChild> {
  for (let cycle = 0; cycle < options.cycles; cycle++) {
    const running = await rig.start();
    rig.sandbox.control.setFaults({ afterCommit: { [options.endpoint]: { action: 'hang' } } });
    let fired = false;
    const onCommit = () => {
      fired = true;
      running.child.kill('SIGKILL');
    };
    rig.sandbox.events.once(options.event, onCommit);
    await rig.placeOrders(running, options.ordersPerCycle, options.spreadMs);
    await Promise.race([running.exited, delay(15_000)]);
    rig.sandbox.events.off(options.event, onCommit);
    await rig.kill(running, fired ? `${options.event} (hang)` : 'end of cycle');
    rig.sandbox.control.setFaults({ afterCommit: {} });
  }
  return finalRun(rig, options.settleMs);
}
