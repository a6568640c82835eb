/**
 * The webhooks benchmark: POST /webhooks/upstream on the real app (buildApp, a real webhook
 * secret, its own database and Redis prefix) with valid, signed, unique order.status_updated
 * events. Figures: verified events acknowledged per second at N connections and the
 * acknowledgement time (p50/p99/p99.9), against a bare Fastify route reading a raw body of the
 * same size and answering 204, measured in the same run. After the run, every accepted event
 * must be in `webhook_events` exactly once.
 *
 * The headline row is the `api` role alone: in production the webhook worker runs in another
 * process (`gateway serve --role worker`), so it is not started here. An informational row
 * measures the same app with the worker in this process (as `gateway serve` with every role).
 *
 * The senders run in a child process (this same module, started with CLIENT_FLAG) so that their
 * event loop never competes with the gateway's. They sign events before each measured segment
 * (signing is the sender's cost, not ours); a segment that outruns the pre-signed stock signs
 * the rest on the fly and the progress log says so.
 */
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { Pool } from 'undici';
import { generateSecret, signedHeaders } from '../src/platform/standard-webhooks.js';
import { createOrderTopicHandlers } from '../src/webhooks/order-topics.js';
import { startWebhookWorker } from '../src/webhooks/index.js';
import { startGatewayFixture, type GatewayFixture } from './gateway-fixture.js';
import { forkSegmentProcess, type SegmentProcess } from './load.js';
import type { LoadSegment } from './load-spec.js';
import { formatStatusCodes, mergeSegments, type LoadResult } from './load-stats.js';
import { correctnessRow, latencyRows } from './report.js';
import { countStatements, statementsSent } from './sql-statements.js';
import type { Benchmark, BenchOptions, BenchResult } from './types.js';

const MIN_EVENTS_PER_S = 2_000;
const P99_LIMIT_MS = 50;
const SUBJECT = 'webhooks (api role)';
const IN_PROCESS = 'webhooks (api + worker in-process)';
const BARE = 'bare fastify (raw body, 204)';
const PATH = '/webhooks/upstream';
const BARE_PATH = '/bare-webhook';
const CLIENT_FLAG = '--webhooks-bench-client';
/** Measured load is cut into rounds of about this length, alternating between targets. */
const ROUND_S = 2;
/** Pre-signed events older than this are thrown away (the receiver accepts 5 minutes). */
const MAX_SIGNATURE_AGE_S = 120;
/** The worker's concurrency as `gateway serve` starts it (startWebhookWorker's default). */
const WORKER_CONCURRENCY = 20;
/** Events the bare baseline cycles through (it neither verifies nor stores them). */
const CYCLED_STOCK = 10_000;
const LOOP_RESOLUTION_MS = 10;
/** USER_HZ on Linux. */
const CLOCK_TICKS_PER_S = 100;

// ---------------------------------------------------------------------------------------------
// The senders, in the child process.

interface SendSpec {
  url: string;
  /** webhook-id prefix: `msg_` + hex; the ids of one target share it, so its rows can be counted. */
  idPrefix: string;
  secret: string;
  connections: number;
  durationS: number;
  discard: boolean;
  /**
   * false (the bare baseline, which neither verifies nor stores): cycle through one pre-signed
   * stock of the same kind of events instead of signing new ones, so its senders stay cheap.
   */
  unique: boolean;
}

interface SendSegment extends LoadSegment {
  /** 2xx answers (warm-up included): events the receiver said it stored. */
  accepted: number;
  /** Events signed during the segment because the pre-signed stock ran out. */
  signedLive: number;
  /** Milliseconds spent signing before the segment (not measured). */
  presignMs: number;
  firstError?: string;
  /** The senders' process during the segment, in cores: near 1, they may be the limit. */
  senderCores: number;
}

type ClientMessage = { ok: true; segment: SendSegment } | { ok: false; error: string };

interface SignedEvent {
  headers: Record<string, string>;
  body: string;
  signedAt: number;
}

const STATUSES = ['pending', 'confirmed', 'cancelled', 'expired'] as const;

/** One event as the provider (and the sandbox) sends it, naming a transaction no order has. */
function signEvent(secret: string, id: string): SignedEvent {
  const body = JSON.stringify({
    type: 'order.status_updated',
    timestamp: new Date().toISOString(),
    data: {
      transaction_id: `TXN-${randomUUID()}`,
      // Far above anything the sandbox hands out: the worker finds no order for it.
      transaction_number: 900_000_000_000 + randomInt(0, 2 ** 40),
      status: STATUSES[randomInt(0, STATUSES.length)],
    },
  });
  return { headers: { 'content-type': 'application/json', ...signedHeaders([secret], id, body) }, body, signedAt: Date.now() };
}

function startSenderProcess(): void {
  const pools = new Map<string, Pool>();
  /** Pre-signed stock per id prefix, and the event rate seen per URL (sizes the next stock). */
  const stock = new Map<string, { events: SignedEvent[]; next: number }>();
  const rateByUrl = new Map<string, number>();
  let sequence = 0;
  // msg_ + 32 hex like the provider's ids: the run's prefix, random hex (ids do not arrive in
  // index order), then a counter that makes each one distinct.
  const nextId = (prefix: string) => {
    const counter = (sequence++).toString(16).padStart(8, '0');
    return `${prefix}${randomBytes(16).toString('hex').slice(0, 32 - (prefix.length - 4) - counter.length)}${counter}`;
  };

  async function send(spec: SendSpec): Promise<SendSegment> {
    const { origin, pathname } = new URL(spec.url);
    // Kept between segments (keep-alive, as a sender would); one pool per connection count.
    const poolKey = `${origin} ${spec.connections}`;
    let pool = pools.get(poolKey);
    if (!pool) {
      pool = new Pool(origin, { connections: spec.connections, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
      pools.set(poolKey, pool);
    }

    // Top the stock up to what this URL can take in the segment, with a margin.
    const presignStart = performance.now();
    const expectedRate = Math.max(rateByUrl.get(spec.url) ?? 0, 5_000);
    const wanted = spec.unique ? Math.ceil(expectedRate * 1.5 * spec.durationS) + spec.connections * 2 : CYCLED_STOCK;
    const entry = stock.get(spec.idPrefix) ?? { events: [], next: 0 };
    const fresh = entry.events.slice(entry.next).filter((e) => Date.now() - e.signedAt < MAX_SIGNATURE_AGE_S * 1000);
    while (fresh.length < wanted) fresh.push(signEvent(spec.secret, nextId(spec.idPrefix)));
    stock.set(spec.idPrefix, { events: fresh, next: 0 });
    const presignMs = performance.now() - presignStart;
    const queue = stock.get(spec.idPrefix)!;
    let signedLive = 0;
    const take = (): SignedEvent => {
      if (queue.next < queue.events.length) return queue.events[queue.next++]!;
      if (!spec.unique) {
        queue.next = 1;
        return queue.events[0]!;
      }
      signedLive++;
      return signEvent(spec.secret, nextId(spec.idPrefix));
    };

    let times = new Float64Array(1 << 16);
    let count = 0;
    let responses = 0;
    let accepted = 0;
    let non2xx = 0;
    let errors = 0;
    let bytes = 0;
    let firstError: string | undefined;
    const statusCodes: Record<string, number> = {};
    const start = performance.now();
    const end = start + spec.durationS * 1000;
    const cpuBefore = process.cpuUsage();

    async function sender(): Promise<void> {
      while (performance.now() < end) {
        const event = take();
        const sentAt = performance.now();
        try {
          const res = await pool!.request({ path: pathname, method: 'POST', headers: event.headers, body: event.body });
          const text = await res.body.text();
          const elapsed = performance.now() - sentAt;
          responses++;
          bytes += text.length;
          statusCodes[res.statusCode] = (statusCodes[res.statusCode] ?? 0) + 1;
          if (res.statusCode >= 200 && res.statusCode < 300) accepted++;
          else {
            non2xx++;
            firstError ??= `${res.statusCode} ${text.slice(0, 300)}`;
          }
          if (spec.discard) continue;
          if (count === times.length) {
            const grown = new Float64Array(times.length * 2);
            grown.set(times);
            times = grown;
          }
          times[count++] = elapsed;
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
          await sleep(10);
        }
      }
    }

    await Promise.all(Array.from({ length: spec.connections }, sender));
    const durationS = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    rateByUrl.set(spec.url, Math.max(rateByUrl.get(spec.url) ?? 0, responses / durationS));
    return {
      url: spec.url,
      durationS,
      responses,
      non2xx,
      errors,
      statusCodes,
      bytes,
      times: times.slice(0, count),
      accepted,
      signedLive,
      presignMs,
      senderCores: (cpu.user + cpu.system) / 1e6 / durationS,
      ...(firstError ? { firstError } : {}),
    };
  }

  process.on('message', (spec: SendSpec) => {
    send(spec).then(
      (segment) => process.send!({ ok: true, segment } satisfies ClientMessage),
      (err: Error) => process.send!({ ok: false, error: err.stack ?? err.message } satisfies ClientMessage),
    );
  });
  process.once('disconnect', () => {
    for (const pool of pools.values()) void pool.destroy();
  });
}

if (process.argv.includes(CLIENT_FLAG) && process.send) startSenderProcess();

type Senders = SegmentProcess<SendSpec, SendSegment>;

/** The senders' process: this module under the parent's tsx loader, one segment per message. */
function startSenders(): Senders {
  return forkSegmentProcess(fileURLToPath(import.meta.url), [CLIENT_FLAG], { name: 'webhook senders', has: 'have' });
}

// ---------------------------------------------------------------------------------------------
// The servers, in this process.

/** The baseline: Fastify 5, no plugins, no logger; reads the raw body as a Buffer and answers 204. */
async function startBareReceiver(): Promise<{ url: string; app: FastifyInstance }> {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post(BARE_PATH, async (request, reply) => {
    if (!Buffer.isBuffer(request.body) || request.body.length === 0) return reply.code(400).send();
    return reply.code(204).send();
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `${url}${BARE_PATH}`, app };
}

/**
 * Diagnostic only, Linux with PostgreSQL on this host: CPU ms used so far by the PostgreSQL
 * backends connected to `database` plus the WAL writer, from /proc. undefined when unreadable.
 */
function postgresCpuMs(database: string): number | undefined {
  try {
    let ticks = 0;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let cmdline: string;
      let stat: string;
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
        if (!cmdline.startsWith('postgres: ') || !(cmdline.includes(` ${database} `) || cmdline.includes('walwriter'))) continue;
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        continue;
      }
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return (ticks * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return undefined;
  }
}

interface Target {
  name: string;
  url: string;
  idPrefix: string;
  /** Every event new (the gateway); false: the bare route, which cycles a fixed stock. */
  unique: boolean;
}

interface TargetFigures {
  load: LoadResult;
  /** 2xx over every segment, warm-up included. */
  accepted: number;
  signedLive: number;
  presignMs: number;
  firstError?: string;
  /** This process during the target's measured segments. */
  cpuMsPerEvent: number;
  cpuCores: number;
  statementsPerEvent: number;
  loopDelay: { p50: number; p99: number };
  senderCores: number;
  /** PostgreSQL's CPU (this database's backends and the WAL writer) per event, when /proc tells. */
  postgresMsPerEvent?: number;
}

interface TargetState {
  segments: SendSegment[];
  accepted: number;
  signedLive: number;
  presignMs: number;
  firstError?: string;
  /** Sender CPU seconds during measured segments. */
  senderCpuS: number;
  /** This process while the target is loaded: CPU (µs), wall time (ms), SQL statements. */
  meter: { cpuUs: number; wallMs: number; statements: number; postgresMs: number | undefined };
  loop: ReturnType<typeof monitorEventLoopDelay>;
}

/**
 * Warm-up per target, then the measured time in rounds visiting the targets in alternating order
 * (A B, B A, …), as bench/measure.ts does, so background load weighs on every target alike.
 */
async function measure(senders: Senders, targets: readonly Target[], secret: string, database: string, options: BenchOptions, warmupS: number, durationS: number, progress: (line: string) => void): Promise<Map<string, TargetFigures>> {
  const state = new Map<string, TargetState>(
    targets.map((t) => [t.name, { segments: [], accepted: 0, signedLive: 0, presignMs: 0, senderCpuS: 0, meter: { cpuUs: 0, wallMs: 0, statements: 0, postgresMs: 0 }, loop: monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS }) }]),
  );
  const spec = (t: Target, seconds: number, discard: boolean): SendSpec => ({ url: t.url, idPrefix: t.idPrefix, unique: t.unique, secret, connections: options.connections, durationS: seconds, discard });
  const note = (t: Target, s: SendSegment, measured: boolean) => {
    const st = state.get(t.name)!;
    st.accepted += s.accepted;
    // Only where it matters: during measurement.
    if (measured) st.signedLive += s.signedLive;
    st.presignMs += s.presignMs;
    if (s.firstError !== undefined) st.firstError ??= s.firstError;
    if (s.non2xx + s.errors > 0) progress(`!!! ${t.name}: ${s.non2xx} non-2xx and ${s.errors} errors (first: ${s.firstError ?? '?'})`);
  };
  if (warmupS > 0) {
    for (const t of targets) {
      progress(`${t.name}: warm-up ${warmupS} s`);
      note(t, await senders.run(spec(t, warmupS, true)), false);
    }
  }
  const rounds = Math.max(1, Math.round(durationS / ROUND_S));
  const segmentS = durationS / rounds;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    progress(`round ${round + 1}/${rounds}: ${segmentS.toFixed(1)} s per target`);
    for (const t of order) {
      const st = state.get(t.name)!;
      // CPU, statements and event-loop delay only while this target is loaded. The child signs
      // its stock first: that second is outside the target's wall time here only approximately,
      // so the CPU figure is per event, not per second.
      st.loop.enable();
      const cpu = process.cpuUsage();
      const wall = performance.now();
      const statements = statementsSent();
      const postgres = postgresCpuMs(database);
      const segment = await senders.run(spec(t, segmentS, false));
      const used = process.cpuUsage(cpu);
      st.meter.cpuUs += used.user + used.system;
      st.meter.wallMs += performance.now() - wall - segment.presignMs;
      st.meter.statements += statementsSent() - statements;
      const postgresAfter = postgresCpuMs(database);
      st.meter.postgresMs = postgres === undefined || postgresAfter === undefined || st.meter.postgresMs === undefined ? undefined : st.meter.postgresMs + postgresAfter - postgres;
      st.loop.disable();
      st.segments.push(segment);
      st.senderCpuS += segment.senderCores * segment.durationS;
      note(t, segment, true);
    }
  }
  return new Map(
    targets.map((t) => {
      const st = state.get(t.name)!;
      const load = mergeSegments(st.segments);
      return [
        t.name,
        {
          load,
          accepted: st.accepted,
          signedLive: st.signedLive,
          presignMs: st.presignMs,
          ...(st.firstError ? { firstError: st.firstError } : {}),
          cpuMsPerEvent: st.meter.cpuUs / 1000 / Math.max(1, load.responses),
          cpuCores: st.meter.cpuUs / 1000 / Math.max(1, st.meter.wallMs),
          statementsPerEvent: st.meter.statements / Math.max(1, load.responses),
          // The histogram holds whole timer intervals: the delay is what exceeds the resolution.
          loopDelay: { p50: Math.max(0, st.loop.percentile(50) / 1e6 - LOOP_RESOLUTION_MS), p99: Math.max(0, st.loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS) },
          senderCores: st.senderCpuS / load.durationS,
          ...(st.meter.postgresMs !== undefined ? { postgresMsPerEvent: st.meter.postgresMs / Math.max(1, load.responses) } : {}),
        },
      ];
    }),
  );
}

interface InboxCount {
  rows: number;
  deliveries: number;
  /** Rows the worker has settled (status other than received). */
  settled: number;
}

async function inboxCount(fixture: GatewayFixture, idPrefix: string): Promise<InboxCount> {
  const [row] = await fixture.prisma.$queryRaw<InboxCount[]>`
    SELECT count(*)::int AS rows, coalesce(sum(deliveries), 0)::int AS deliveries, (count(*) FILTER (WHERE status <> 'received'))::int AS settled
    FROM webhook_events WHERE id LIKE ${`${idPrefix}%`}`;
  return row!;
}

// ---------------------------------------------------------------------------------------------
// Figures.

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

function describe(name: string, m: TargetFigures): string {
  const l = m.load.latency;
  const codes = formatStatusCodes(m.load.statusCodes);
  return (
    `${name}: ${Math.round(m.load.rps)} events/s over ${f1(m.load.durationS)} s, p50 ${f2(l.p50)} / p99 ${f2(l.p99)} / p99.9 ${f2(l.p99_9)} / max ${f1(l.max)} ms, ` +
    `statuses ${codes || 'none'}, errors ${m.load.errors}; this process ${f2(m.cpuCores)} cores, ${f2(m.cpuMsPerEvent)} ms CPU per event, ` +
    `${f2(m.statementsPerEvent)} SQL statements per event${m.postgresMsPerEvent !== undefined ? ` (PostgreSQL ${f2(m.postgresMsPerEvent)} ms CPU per event)` : ''}, event-loop delay p50 ${f1(m.loopDelay.p50)} / p99 ${f1(m.loopDelay.p99)} ms; ` +
    `senders ${f2(m.senderCores)} cores, pre-signed for ${Math.round(m.presignMs)} ms${m.signedLive > 0 ? `, !!! ${m.signedLive} events signed during measurement (stock ran out)` : ''}`
  );
}

function rows(subject: string, m: TargetFigures, bare: TargetFigures, judged: boolean, inboxMismatch: number): BenchResult[] {
  const perf = judged ? ('performance' as const) : undefined;
  return [
    {
      subject,
      metric: 'events/s',
      unit: '',
      value: m.load.rps,
      baseline: bare.load.rps,
      ...(perf ? { target: { kind: perf, on: 'value', op: '>=', limit: MIN_EVENTS_PER_S } as const } : {}),
    },
    ...latencyRows(subject, m.load.latency, bare.load.latency, judged ? P99_LIMIT_MS : undefined),
    correctnessRow(subject, 'non-2xx + errors', m.load.non2xx + m.load.errors, bare.load.non2xx + bare.load.errors),
    correctnessRow(subject, 'accepted ≠ stored once', inboxMismatch),
  ];
}

/** |rows − accepted| + repeats: 0 when every accepted event is in the inbox exactly once. */
function mismatch(count: InboxCount, accepted: number): number {
  return Math.abs(count.rows - accepted) + (count.deliveries - count.rows);
}

async function run(options: BenchOptions): Promise<BenchResult[]> {
  const progress = (line: string) => options.progress(`webhooks: ${line}`);
  const closers: (() => Promise<unknown>)[] = [];
  // Every event id of this run starts with `msg_<runTag>`, then one hex digit per target.
  const runTag = randomBytes(4).toString('hex');
  let fixture: GatewayFixture | undefined;
  try {
    progress('preparing database, sandbox, catalog sync and app');
    fixture = await startGatewayFixture(options.env);
    closers.push(() => fixture!.close());
    // The run's events go, so the bench database stays small.
    closers.push(() => fixture!.prisma.$executeRaw`DELETE FROM webhook_events WHERE id LIKE ${`msg_${runTag}%`}`);
    const secret = generateSecret();
    const database = new URL(fixture.config.databaseUrl).pathname.slice(1);
    const gateway = await fixture.startApp({ webhookSecrets: [secret] });
    const bare = await startBareReceiver();
    closers.push(() => bare.app.close());

    const senders = startSenders();
    closers.push(() => senders.close());
    countStatements();

    const targets: Target[] = [
      { name: BARE, url: bare.url, idPrefix: `msg_${runTag}0`, unique: false },
      { name: SUBJECT, url: `${gateway.url}${PATH}`, idPrefix: `msg_${runTag}1`, unique: true },
    ];
    // A few events each first: proves the path (and the signature) before loading it.
    const probed = new Map<string, number>();
    for (const t of targets) {
      const probe = await senders.run({ url: t.url, idPrefix: t.idPrefix, unique: t.unique, secret, connections: 1, durationS: 0.2, discard: true });
      if (probe.non2xx + probe.errors > 0 || probe.accepted === 0) throw new Error(`${t.name}: the first events were refused: ${probe.firstError ?? 'no answer'}`);
      probed.set(t.name, probe.accepted);
    }

    progress(
      `${SUBJECT}: the api role alone, no webhook worker in this process (production runs it as its own process); ` +
        `${options.connections} connections, ${options.warmupS} s warm-up + ${options.durationS} s measured per target`,
    );
    const measured = await measure(senders, targets, secret, database, options, options.warmupS, options.durationS, progress);
    const baseline = measured.get(BARE)!;
    const subject = measured.get(SUBJECT)!;
    for (const t of targets) progress(describe(t.name, measured.get(t.name)!));
    // The probe's accepted events count too: they are in the inbox.
    const subjectCount = await inboxCount(fixture, targets[1]!.idPrefix);
    const subjectAccepted = subject.accepted + probed.get(SUBJECT)!;
    progress(`${SUBJECT}: ${subjectAccepted} events accepted (warm-up included), ${subjectCount.rows} inbox rows, ${subjectCount.deliveries} deliveries, ${subjectCount.settled} settled`);
    const results = rows(SUBJECT, subject, baseline, true, mismatch(subjectCount, subjectAccepted));
    results.push(correctnessRow(BARE, 'non-2xx + errors', baseline.load.non2xx + baseline.load.errors));

    // Informational: the same app with the webhook worker in this process, as `gateway serve`
    // with every role. The api-only phase's jobs are dropped first so the worker starts empty.
    const queue = fixture.queues.get('webhook-inbox');
    await queue.drain();
    const worker = startWebhookWorker({
      queues: fixture.queues,
      prisma: fixture.prisma,
      log: fixture.log,
      handlers: createOrderTopicHandlers({ prisma: fixture.prisma, queues: fixture.queues, busy: gateway.components.busy, log: fixture.log }),
      concurrency: WORKER_CONCURRENCY,
    });
    let workerClosed = false;
    closers.push(async () => (workerClosed ? undefined : worker.close()));
    await worker.waitUntilReady();
    const inProcess: Target = { name: IN_PROCESS, url: `${gateway.url}${PATH}`, idPrefix: `msg_${runTag}2`, unique: true };
    const variantWarmupS = Math.min(options.warmupS, 2);
    const variantS = options.smoke ? options.durationS : Math.max(2, options.durationS / 2);
    progress(`${IN_PROCESS}: webhook worker (concurrency ${WORKER_CONCURRENCY}) in this process; ${variantWarmupS} s warm-up + ${variantS} s measured`);
    const before = await inboxCount(fixture, inProcess.idPrefix);
    const startedAt = performance.now();
    const variant = (await measure(senders, [inProcess], secret, database, options, variantWarmupS, variantS, progress)).get(IN_PROCESS)!;
    const elapsedS = (performance.now() - startedAt) / 1000;
    const after = await inboxCount(fixture, inProcess.idPrefix);
    await worker.close();
    workerClosed = true;
    const variantCount = await inboxCount(fixture, inProcess.idPrefix);
    progress(describe(IN_PROCESS, variant));
    progress(
      `${IN_PROCESS}: the worker settled ${after.settled - before.settled} events in ${f1(elapsedS)} s (warm-up included: ${Math.round((after.settled - before.settled) / elapsedS)} events/s) ` +
        `while ${variant.accepted} were accepted; ${after.rows - after.settled} still waiting at the end`,
    );
    results.push(...rows(IN_PROCESS, variant, baseline, false, mismatch(variantCount, variant.accepted)));
    results.push({ subject: IN_PROCESS, metric: 'worker settled/s', unit: '', value: (after.settled - before.settled) / elapsedS });
    return results;
  } finally {
    for (const close of closers.reverse()) await close().catch((err: Error) => progress(`cleanup: ${err.message}`));
  }
}

export const webhooksBenchmark: Benchmark = {
  name: 'webhooks',
  description: 'POST /webhooks/upstream with signed, unique events (api role; worker elsewhere) against a bare raw-body route: events/s, p50/p99 acknowledgement, inbox check',
  run,
};
