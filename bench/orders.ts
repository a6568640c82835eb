/**
 * The orders benchmark: POST /v1/orders with `Prefer: wait=30` through the whole gateway (HTTP
 * app, PostgreSQL, BullMQ order worker, provider client) against the in-process sandbox, which
 * adds a fixed latency to every provider call. Figures: orders/s at N concurrent clients against
 * what the provider latency allows, and the gateway's own time per order (end-to-end minus the
 * provider time recorded on the order's timeline).
 *
 * The clients run in a child process (this same module, started with CLIENT_FLAG) so that their
 * event loop never competes with the gateway's, as the catalog benchmark's autocannon does.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool } from 'undici';
import { createBusyMode } from '../src/orders/busy-mode.js';
import { startOrderWorker } from '../src/orders/order-jobs.js';
import { createOrderStore } from '../src/orders/order-store.js';
import { createOrderWaiters, listenForSettledOrders, orderSettledChannel } from '../src/orders/order-waiters.js';
import { createTerminalHooks } from '../src/orders/terminal-hooks.js';
import { createRedis } from '../src/platform/redis.js';
import { loadCatalogSeed, type SandboxCatalogSeed } from '../src/sandbox/index.js';
import { startCpuProfile } from './cpu-profile.js';
import { startGatewayFixture } from './gateway-fixture.js';
import { percentile, summarise, type LatencySummary } from './load-stats.js';
import { correctnessRow } from './report.js';
import { countStatements, statementsSent } from './sql-statements.js';
import type { Benchmark, BenchOptions, BenchResult } from './types.js';

/** Added by the sandbox to every provider call (the issue's figure). */
const PROVIDER_LATENCY_MS = 20;
/** balance → initiate → confirm, one after the other. */
const CALLS_PER_ORDER = 3;
const ADDED_P50_LIMIT_MS = 15;
const MIN_THROUGHPUT_RATIO = 0.8;
/** A provider call's lease: as `gateway serve` (src/serve.ts ORDER_LEASE_MS). */
const ORDER_LEASE_MS = 60_000;
const WAIT_S = 30;
const CARD_ID = 'BENCH-1';
const SUBJECT = 'orders';
const CLIENT_FLAG = '--orders-bench-client';

// ---------------------------------------------------------------------------------------------
// The load: N clients, each in a loop, in the child process.

interface ClientSpec {
  url: string;
  key: string;
  /** Idempotency keys start with this (unique per run), so the run's orders can be found. */
  keyPrefix: string;
  connections: number;
  warmupS: number;
  durationS: number;
}

/** One POST /v1/orders, timed on the wall clock (epoch ms, sub-millisecond). */
interface Sample {
  sentAt: number;
  answeredAt: number;
  httpStatus: number;
  orderId: string | null;
  status: string | null;
  error?: string;
}

interface ClientResult {
  samples: Sample[];
  measureStart: number;
  measureEnd: number;
}

type ClientMessage = { ok: true; result: ClientResult } | { ok: false; error: string };

const wallClock = () => performance.timeOrigin + performance.now();

async function runClients(spec: ClientSpec): Promise<ClientResult> {
  const pool = new Pool(spec.url, { connections: spec.connections, pipelining: 1, headersTimeout: (WAIT_S + 30) * 1000, bodyTimeout: 30_000 });
  const started = wallClock();
  const measureStart = started + spec.warmupS * 1000;
  const measureEnd = measureStart + spec.durationS * 1000;
  const samples: Sample[] = [];
  const body = JSON.stringify({ cardId: CARD_ID, quantity: 1 });
  let sequence = 0;

  async function client(): Promise<void> {
    while (wallClock() < measureEnd) {
      const sentAt = wallClock();
      try {
        const res = await pool.request({
          path: '/v1/orders',
          method: 'POST',
          headers: {
            authorization: `Bearer ${spec.key}`,
            'content-type': 'application/json',
            'idempotency-key': `${spec.keyPrefix}-${sequence++}`,
            prefer: `wait=${WAIT_S}`,
          },
          body,
        });
        const text = await res.body.text();
        const answeredAt = wallClock();
        let parsed: { id?: string; status?: string } = {};
        try {
          parsed = JSON.parse(text) as typeof parsed;
        } catch {
          // Counted as a failure below (no status).
        }
        samples.push({
          sentAt,
          answeredAt,
          httpStatus: res.statusCode,
          orderId: parsed.id ?? null,
          status: parsed.status ?? null,
          ...(res.statusCode !== 200 || parsed.status !== 'fulfilled' ? { error: text.slice(0, 300) } : {}),
        });
      } catch (err) {
        samples.push({ sentAt, answeredAt: wallClock(), httpStatus: 0, orderId: null, status: null, error: (err as Error).message });
        await sleep(10);
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: spec.connections }, client));
  } finally {
    await pool.close();
  }
  return { samples, measureStart, measureEnd };
}

if (process.argv.includes(CLIENT_FLAG) && process.send) {
  process.once('message', (spec: ClientSpec) => {
    runClients(spec).then(
      (result) => process.send!({ ok: true, result } satisfies ClientMessage, () => process.disconnect()),
      (err: Error) => process.send!({ ok: false, error: err.stack ?? err.message } satisfies ClientMessage, () => process.disconnect()),
    );
  });
}

/** Runs the clients in a child process (this module, under the parent's tsx loader). */
async function runClientProcess(spec: ClientSpec): Promise<ClientResult> {
  const child = fork(fileURLToPath(import.meta.url), [CLIENT_FLAG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
  const message = await new Promise<ClientMessage>((resolve, reject) => {
    child.once('message', (m) => resolve(m as ClientMessage));
    child.once('exit', (code) => reject(new Error(`order clients exited (code ${code}) without an answer`)));
    child.send(spec);
  });
  if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  if (!message.ok) throw new Error(`order clients failed: ${message.error}`);
  return message.result;
}

// ---------------------------------------------------------------------------------------------
// The gateway under test.

export interface OrdersSetup {
  name: string;
  /** DATABASE_POOL_MAX; default the configuration's default. */
  poolMax?: number;
  /** Provider client connections; default UPSTREAM_CONNECTIONS' default, as `gateway serve`. */
  upstreamConnections?: number;
  /** ORDER_WORKER_CONCURRENCY; default the configuration's default. */
  workerConcurrency?: number;
  /** LOG_LEVEL; default info, as the catalog benchmark. */
  logLevel?: string;
}

/** The default sandbox catalog plus one vendor whose single card never runs out in a run. */
function benchCatalog(): SandboxCatalogSeed {
  const base = loadCatalogSeed();
  return {
    vendors: [
      ...base.vendors,
      {
        vendor_id: 'BENCH',
        name: 'Benchmark vendor',
        name_ar: 'مورد القياس',
        cards: [{ card_id: CARD_ID, name_in_english: 'Benchmark card', name_in_arabic: 'بطاقة القياس', amount: '1.00', stock: 1_000_000 }],
      },
    ],
  };
}

interface OrderFigures {
  setup: OrdersSetup;
  workerConcurrency: number;
  poolMax: number;
  /** Orders answered inside the measured window. */
  measured: number;
  durationS: number;
  ordersPerS: number;
  /** Answers that were not 200 + fulfilled, over the whole run (warm-up included). */
  failures: number;
  total: number;
  endToEnd: LatencySummary;
  provider: LatencySummary;
  added: LatencySummary;
  /** The measured orders whose timeline did not have exactly CALLS_PER_ORDER provider calls. */
  oddTimelines: number;
  minProviderMs: number;
  /** Medians of where the added time goes (see measureSetup). */
  phases: Record<string, number>;
  /** The gateway process (app, worker, sandbox) during the load: CPU use in cores, event-loop delay in ms. */
  cpuCores: number;
  loopDelay: { p50: number; p99: number };
  /** SQL statements sent per order (all of the process's statements during the load / orders answered). */
  statementsPerOrder: number;
  cpuMsPerOrder: number;
  /** The whole machine (every process: gateway, PostgreSQL, Redis, sandbox, clients): busy cores and CPU ms per order. */
  machine: { busyCores: number; cpus: number; msPerOrder: number } | undefined;
}

/** Busy and total CPU time of the whole machine so far, in ms, from /proc/stat (Linux only). */
function machineCpu(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    // USER_HZ is 100 on Linux: 10 ms per tick.
    return { busy: (total - idle) * 10, total: total * 10 };
  } catch {
    return undefined;
  }
}

const summariseValues = (values: readonly number[]): LatencySummary => summarise(Float64Array.from(values).sort());

interface TimelineRow {
  id: string;
  created_ms: number;
  fulfilled_ms: number | null;
  provider_ms: number;
  calls: number;
  balance_at_ms: number | null;
  balance_ms: number | null;
}

async function measureSetup(options: BenchOptions, setup: OrdersSetup, progress: (line: string) => void): Promise<OrderFigures> {
  const configEnv: Record<string, string> = {};
  if (setup.poolMax !== undefined) configEnv.DATABASE_POOL_MAX = String(setup.poolMax);
  if (setup.workerConcurrency !== undefined) configEnv.ORDER_WORKER_CONCURRENCY = String(setup.workerConcurrency);
  if (setup.logLevel !== undefined) configEnv.LOG_LEVEL = setup.logLevel;
  const fixture = await startGatewayFixture(options.env, {
    sandbox: { catalog: benchCatalog(), faults: { latencyMs: PROVIDER_LATENCY_MS } },
    configEnv,
    ...(setup.upstreamConnections !== undefined ? { upstreamConnections: setup.upstreamConnections } : {}),
  });
  const { config, prisma, log, queues } = fixture;
  const keyPrefix = `bench-${fixture.prefix}-${randomBytes(3).toString('hex')}`;
  const closers: (() => Promise<unknown>)[] = [];
  try {
    // As `gateway serve` wires the api and worker roles (src/serve.ts), in one process.
    const waiters = createOrderWaiters();
    const subscriber = createRedis(config.redisUrl, 'subscriber', log);
    closers.push(async () => subscriber.quit());
    closers.push(await listenForSettledOrders(subscriber, orderSettledChannel(fixture.prefix), waiters));
    const worker = startOrderWorker({
      queues,
      log,
      concurrency: config.orders.workerConcurrency,
      deps: {
        store: createOrderStore(prisma, `bench:${fixture.prefix}`, ORDER_LEASE_MS),
        upstream: fixture.upstream,
        vault: fixture.vault,
        busy: createBusyMode({ prisma }),
        terminal: createTerminalHooks({ queues, publisher: fixture.redis, log }),
        log,
      },
    });
    closers.push(() => worker.close());
    await worker.waitUntilReady();
    const { url } = await fixture.startApp({ components: { waiters } });
    const key = await fixture.key(['orders:write', 'orders:read']);

    // One order first: logs the provider client in and proves the path before loading it.
    const first = await fetch(`${url}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `${keyPrefix}-first`, prefer: `wait=${WAIT_S}` },
      body: JSON.stringify({ cardId: CARD_ID, quantity: 1 }),
    });
    const firstBody = (await first.json()) as { status?: string };
    if (first.status !== 200 || firstBody.status !== 'fulfilled') throw new Error(`the first order answered ${first.status}: ${JSON.stringify(firstBody).slice(0, 300)}`);

    progress(
      `${setup.name}: ${options.connections} clients, worker concurrency ${config.orders.workerConcurrency}, DATABASE_POOL_MAX ${config.databasePoolMax}, ` +
        `provider connections ${setup.upstreamConnections ?? config.upstream.connections}; ${options.warmupS} s warm-up + ${options.durationS} s measured`,
    );
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    countStatements();
    const statementsBefore = statementsSent();
    const cpuBefore = process.cpuUsage();
    const machineBefore = machineCpu();
    const wallBefore = performance.now();
    const stopProfile = await startCpuProfile(`orders-${setup.name}`, progress);
    const run = await runClientProcess({ url, key, keyPrefix, connections: options.connections, warmupS: options.warmupS, durationS: options.durationS });
    await stopProfile();

    const cpu = process.cpuUsage(cpuBefore);
    const machineAfter = machineCpu();
    const statements = statementsSent() - statementsBefore;
    const cpuCores = (cpu.user + cpu.system) / 1000 / (performance.now() - wallBefore);
    loop.disable();
    const loopDelay = { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6 };
    const failed = run.samples.filter((s) => s.httpStatus !== 200 || s.status !== 'fulfilled');
    for (const f of failed.slice(0, 5)) progress(`!!! ${setup.name}: order ${f.orderId ?? '?'} answered ${f.httpStatus} ${f.status ?? ''} ${f.error ?? ''}`);
    const fulfilled = run.samples.filter((s) => s.status === 'fulfilled' && s.orderId);
    let measured = fulfilled.filter((s) => s.answeredAt >= run.measureStart && s.answeredAt < run.measureEnd);
    // A smoke run (1 s, no warm-up) can end before the first orders are answered: judge them all.
    if (measured.length === 0 && options.smoke) measured = fulfilled;
    if (measured.length === 0) throw new Error(`${setup.name}: no order was fulfilled in the measured window (${failed.length} failures)`);

    // Provider time per order, from its timeline, and the times of its steps.
    const ids = measured.map((s) => s.orderId!);
    const rows = await prisma.$queryRaw<TimelineRow[]>`
      SELECT o.id::text AS id,
             (extract(epoch FROM o.created_at) * 1000)::float8 AS created_ms,
             (extract(epoch FROM o.fulfilled_at) * 1000)::float8 AS fulfilled_ms,
             coalesce(sum(e.duration_ms) FILTER (WHERE e.kind = 'provider_call'), 0)::float8 AS provider_ms,
             count(*) FILTER (WHERE e.kind = 'provider_call')::int AS calls,
             (extract(epoch FROM min(e.at) FILTER (WHERE e.kind = 'provider_call' AND e.endpoint = 'getBalance')) * 1000)::float8 AS balance_at_ms,
             min(e.duration_ms) FILTER (WHERE e.kind = 'provider_call' AND e.endpoint = 'getBalance')::float8 AS balance_ms
      FROM orders o LEFT JOIN order_events e ON e.order_id = o.id
      WHERE o.id = ANY(${ids}::uuid[])
      GROUP BY o.id`;
    const byId = new Map(rows.map((r) => [r.id, r]));

    const endToEnd: number[] = [];
    const provider: number[] = [];
    const added: number[] = [];
    const phase = { accept: [] as number[], pickup: [] as number[], pipeline: [] as number[], answer: [] as number[] };
    let oddTimelines = 0;
    for (const s of measured) {
      const row = byId.get(s.orderId!);
      if (!row) {
        oddTimelines++;
        continue;
      }
      if (row.calls !== CALLS_PER_ORDER) oddTimelines++;
      const e2e = s.answeredAt - s.sentAt;
      endToEnd.push(e2e);
      provider.push(row.provider_ms);
      added.push(e2e - row.provider_ms);
      // Where the added time goes (same host clock, millisecond timestamps):
      //   accept   POST sent → order row built (auth, idempotency lookup)
      //   pickup   row built → balance call sent (insert commit, enqueue, BullMQ pick-up, lease, load)
      //   pipeline balance answered → fulfilled (the commits between and around the other calls, minus those calls)
      //   answer   fulfilled → answer received (final commit, publish, pub/sub wake-up, reload, cards, response)
      if (row.fulfilled_ms !== null && row.balance_at_ms !== null && row.balance_ms !== null) {
        phase.accept.push(row.created_ms - s.sentAt);
        phase.pickup.push(row.balance_at_ms - row.balance_ms - row.created_ms);
        phase.pipeline.push(row.fulfilled_ms - row.balance_at_ms - (row.provider_ms - row.balance_ms));
        phase.answer.push(s.answeredAt - row.fulfilled_ms);
      }
    }
    const median = (v: number[]) => percentile(Float64Array.from(v).sort(), 50);
    const durationS = (run.measureEnd - run.measureStart) / 1000;
    return {
      setup,
      workerConcurrency: config.orders.workerConcurrency,
      poolMax: config.databasePoolMax,
      measured: measured.length,
      durationS,
      ordersPerS: measured.length / durationS,
      failures: failed.length,
      total: run.samples.length,
      endToEnd: summariseValues(endToEnd),
      provider: summariseValues(provider),
      added: summariseValues(added),
      oddTimelines,
      minProviderMs: Math.min(...provider),
      phases: Object.fromEntries(Object.entries(phase).map(([k, v]) => [k, median(v)])),
      cpuCores,
      loopDelay,
      statementsPerOrder: statements / Math.max(1, run.samples.length),
      cpuMsPerOrder: (cpu.user + cpu.system) / 1000 / Math.max(1, run.samples.length),
      machine:
        machineBefore && machineAfter
          ? {
              busyCores: ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * cpus().length,
              cpus: cpus().length,
              msPerOrder: (machineAfter.busy - machineBefore.busy) / Math.max(1, run.samples.length),
            }
          : undefined,
    };
  } finally {
    for (const close of closers.reverse()) await close().catch((err: Error) => progress(`cleanup: ${err.message}`));
    await queues.close().catch((err: Error) => progress(`cleanup: ${err.message}`));
    // The run's orders go, so the bench database stays small and the API key can be deleted.
    await prisma
      .$transaction([
        prisma.$executeRaw`DELETE FROM order_events WHERE order_id IN (SELECT id FROM orders WHERE idempotency_key LIKE ${`${keyPrefix}-%`})`,
        prisma.$executeRaw`DELETE FROM order_cards WHERE order_id IN (SELECT id FROM orders WHERE idempotency_key LIKE ${`${keyPrefix}-%`})`,
        prisma.$executeRaw`DELETE FROM callback_deliveries WHERE order_id IN (SELECT id FROM orders WHERE idempotency_key LIKE ${`${keyPrefix}-%`})`,
        prisma.$executeRaw`DELETE FROM orders WHERE idempotency_key LIKE ${`${keyPrefix}-%`}`,
      ])
      .catch((err: Error) => progress(`cleanup: could not delete the run's orders: ${err.message}`));
    await fixture.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Figures.

const f1 = (n: number) => n.toFixed(1);

function describe(m: OrderFigures, bound: number): string {
  const p = m.phases;
  return (
    `${m.setup.name}: ${f1(m.ordersPerS)} orders/s (${m.measured} in ${m.durationS.toFixed(1)} s; bound ${f1(bound)}, ratio ${(m.ordersPerS / bound).toFixed(2)}), ` +
    `end-to-end p50 ${f1(m.endToEnd.p50)} / p99 ${f1(m.endToEnd.p99)} ms, provider p50 ${f1(m.provider.p50)} (min ${m.minProviderMs}) ms, ` +
    `added p50 ${f1(m.added.p50)} / p90 ${f1(m.added.p90)} / p99 ${f1(m.added.p99)} ms; ` +
    `added-time medians: accept ${f1(p.accept!)}, pick-up ${f1(p.pickup!)}, between calls ${f1(p.pipeline!)}, answer ${f1(p.answer!)} ms; ` +
    `gateway process ${m.cpuCores.toFixed(2)} cores (${f1(m.cpuMsPerOrder)} ms CPU per order), ` +
    (m.machine ? `whole machine ${m.machine.busyCores.toFixed(2)} of ${m.machine.cpus} cores busy (${f1(m.machine.msPerOrder)} ms CPU per order, PostgreSQL and the sandbox included), ` : '') +
    `${f1(m.statementsPerOrder)} SQL statements per order, event-loop delay p50 ${f1(m.loopDelay.p50)} / p99 ${f1(m.loopDelay.p99)} ms; ` +
    `${m.failures} failed of ${m.total}${m.oddTimelines > 0 ? `, ${m.oddTimelines} timelines without exactly ${CALLS_PER_ORDER} provider calls` : ''}`
  );
}

/** What the provider latency allows: each client waits at least one order's provider time per order. */
function boundOf(m: OrderFigures, connections: number): number {
  return (connections * 1000) / m.minProviderMs;
}

function rows(subject: string, m: OrderFigures, connections: number, judged: boolean): BenchResult[] {
  const perf = judged ? ('performance' as const) : undefined;
  return [
    {
      subject,
      metric: 'orders/s',
      unit: '',
      value: m.ordersPerS,
      baseline: boundOf(m, connections),
      ...(perf ? { target: { kind: perf, on: 'ratio', op: '>=', limit: MIN_THROUGHPUT_RATIO } as const } : {}),
    },
    {
      subject,
      metric: 'added p50',
      unit: 'ms',
      value: m.added.p50,
      ...(perf ? { target: { kind: perf, on: 'value', op: '<', limit: ADDED_P50_LIMIT_MS } as const } : {}),
    },
    { subject, metric: 'added p99', unit: 'ms', value: m.added.p99 },
    { subject, metric: 'end-to-end p50', unit: 'ms', value: m.endToEnd.p50, baseline: m.provider.p50 },
    { subject, metric: 'end-to-end p99', unit: 'ms', value: m.endToEnd.p99, baseline: m.provider.p99 },
    correctnessRow(subject, 'orders not fulfilled', m.failures + m.oddTimelines),
  ];
}

/** Diagnostic setups for BENCH_VARIANTS=1: the same code, other options to the real constructors. */
const VARIANTS: OrdersSetup[] = [
  { name: 'variant: provider connections 64', upstreamConnections: 64 },
  { name: 'variant: provider connections 64 + DATABASE_POOL_MAX 30', upstreamConnections: 64, poolMax: 30 },
  { name: 'variant: provider connections 64 + LOG_LEVEL=warn', upstreamConnections: 64, logLevel: 'warn' },
];

async function run(options: BenchOptions): Promise<BenchResult[]> {
  const progress = (line: string) => options.progress(`orders: ${line}`);
  const setups: OrdersSetup[] = [{ name: SUBJECT }, ...(options.variants ? VARIANTS : [])];
  const results: BenchResult[] = [];
  for (const setup of setups) {
    progress(`${setup.name}: preparing database, sandbox (+${PROVIDER_LATENCY_MS} ms per call), catalog sync, order worker and app`);
    const m = await measureSetup(options, setup, progress);
    const bound = boundOf(m, options.connections);
    progress(describe(m, bound));
    progress(
      `${setup.name}: bound = ${options.connections} clients × 1000 / ${m.minProviderMs} ms (the smallest provider time of a measured order); ` +
        `with the configured ${CALLS_PER_ORDER} × ${PROVIDER_LATENCY_MS} ms it would be ${f1((options.connections * 1000) / (CALLS_PER_ORDER * PROVIDER_LATENCY_MS))}`,
    );
    results.push(...rows(setup.name, m, options.connections, setup.name === SUBJECT));
  }
  return results;
}

export const ordersBenchmark: Benchmark = {
  name: 'orders',
  description: `POST /v1/orders with Prefer: wait through app, queue, worker and sandbox (+${PROVIDER_LATENCY_MS} ms per provider call): orders/s against the provider-latency bound, gateway-added time p50/p99`,
  run,
};
