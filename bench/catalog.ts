import type { FastifyReply, FastifyRequest } from 'fastify';
import { Redis as IORedis } from 'ioredis';
import { pino } from 'pino';
import type { App } from '../src/app.js';
import { loggerOptions } from '../src/platform/logger.js';
import { redisOptions, waitForRedis, type Redis } from '../src/platform/redis.js';
import { startBareServer } from './bare-server.js';
import { startGatewayFixture, type GatewayFixture } from './gateway-fixture.js';
import { formatStatusCodes, type LoadResult } from './load-stats.js';
import { measureTargets, type HttpTarget } from './measure.js';
import { correctnessRow, latencyRows } from './report.js';
import type { Benchmark, BenchOptions, BenchResult } from './types.js';

const P99_LIMIT_MS = 10;
const MIN_RPS_RATIO = 0.8;
const BARE = 'bare fastify';
const SUBJECT = 'catalog denominations';

/** The vendor with the most active denominations: the largest everyday answer. */
function pickVendor(fixture: GatewayFixture): string {
  let best: [string, number] | undefined;
  for (const [vendorId, list] of fixture.catalog.snapshot.denominationsByVendor) {
    const active = list.filter((d) => d.active).length;
    if (!best || active > best[1]) best = [vendorId, active];
  }
  if (!best || best[1] === 0) throw new Error('the synced catalog has no active denominations');
  return best[0];
}

async function fetchOnce(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

/**
 * Diagnostic copies of the denominations route on the same app: the same handler work (the
 * snapshot's pre-rendered body and ETag) with authentication and/or the rate limiter removed,
 * so the difference to the real route is what those cost.
 */
function registerVariantRoutes(fixture: GatewayFixture, vendorId: string) {
  return (app: App) => {
    const handler = async (_request: FastifyRequest, reply: FastifyReply) => {
      const cache = fixture.catalog;
      const snapshot = cache.snapshot;
      const list = snapshot.denominationsByVendor.get(vendorId) ?? [];
      const rendered = snapshot.render(`denominations:false:${vendorId}`, cache.isStale(snapshot), () => list.filter((d) => d.active));
      return reply.header('etag', rendered.etag).header('cache-control', 'private, no-cache').type('application/json; charset=utf-8').send(rendered.body);
    };
    app.get('/bench/denominations/auth-only', { onRequest: app.requireScopes('catalog:read'), config: { rateLimit: false } }, handler);
    app.get('/bench/denominations/open', { config: { rateLimit: false } }, handler);
  };
}

/** Variants of the real app, each on its own port, for BENCH_VARIANTS=1. */
async function startVariants(fixture: GatewayFixture, gatewayUrl: string, path: string, auth: Record<string, string>, closers: (() => Promise<unknown>)[]) {
  const sink = pino.destination({ dest: '/dev/null', sync: true });
  const targets: HttpTarget[] = [
    { name: 'variant: no rate limit', url: `${gatewayUrl}/bench/denominations/auth-only`, headers: auth },
    { name: 'variant: no auth, no rate limit', url: `${gatewayUrl}/bench/denominations/open` },
  ];
  const quiet = await fixture.startApp({ log: fixture.logger('warn') });
  targets.push({ name: 'variant: LOG_LEVEL=warn', url: `${quiet.url}${path}`, headers: auth });
  const unredacted = await fixture.startApp({ log: pino(loggerOptions('info', { redact: undefined }), sink) });
  targets.push({ name: 'variant: logs without redaction', url: `${unredacted.url}${path}`, headers: auth });
  const epoch = await fixture.startApp({ log: pino(loggerOptions('info', { timestamp: pino.stdTimeFunctions.epochTime }), sink) });
  targets.push({ name: 'variant: logs with epoch time', url: `${epoch.url}${path}`, headers: auth });
  // The producer options `gateway serve` uses, plus ioredis auto-pipelining.
  const pipelined: Redis = new IORedis(fixture.config.redisUrl, { ...redisOptions('producer'), enableAutoPipelining: true });
  closers.push(async () => pipelined.quit());
  await waitForRedis(pipelined);
  const withPipelining = await fixture.startApp({ redis: pipelined });
  targets.push({ name: 'variant: redis auto-pipelining', url: `${withPipelining.url}${path}`, headers: auth });
  const both = await fixture.startApp({ redis: pipelined, log: fixture.logger('warn') });
  targets.push({ name: 'variant: auto-pipelining + LOG_LEVEL=warn', url: `${both.url}${path}`, headers: auth });
  return targets;
}

function rows(subject: string, m: LoadResult, bare: LoadResult, judged: boolean): BenchResult[] {
  const perf = judged ? ('performance' as const) : undefined;
  return [
    {
      subject,
      metric: 'req/s',
      unit: '',
      value: m.rps,
      baseline: bare.rps,
      ...(perf ? { target: { kind: perf, on: 'ratio', op: '>=', limit: MIN_RPS_RATIO } as const } : {}),
    },
    ...latencyRows(subject, m.latency, bare.latency, judged ? P99_LIMIT_MS : undefined),
    correctnessRow(subject, 'non-2xx + errors', m.non2xx + m.errors, bare.non2xx + bare.errors),
  ];
}

function describe(load: LoadResult): string {
  const l = load.latency;
  const codes = formatStatusCodes(load.statusCodes);
  return (
    `${Math.round(load.rps)} req/s over ${load.durationS.toFixed(1)} s, p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms, ` +
    `p99.9 ${l.p99_9.toFixed(2)} ms, max ${l.max.toFixed(1)} ms, ${Math.round(load.bytesPerResponse)} B/response, statuses ${codes || 'none'}, errors ${load.errors}`
  );
}

async function run(options: BenchOptions): Promise<BenchResult[]> {
  const progress = (line: string) => options.progress(`catalog: ${line}`);
  const closers: (() => Promise<unknown>)[] = [];
  try {
    progress('preparing database, sandbox, catalog sync and app');
    const fixture = await startGatewayFixture(options.env);
    closers.push(() => fixture.close());
    const vendorId = pickVendor(fixture);
    const auth = { authorization: `Bearer ${await fixture.key(['catalog:read'])}` };
    const path = `/v1/catalog/vendors/${encodeURIComponent(vendorId)}/denominations`;

    const gateway = await fixture.startApp(options.variants ? { configure: registerVariantRoutes(fixture, vendorId) } : {});
    const answer = await fetchOnce(`${gateway.url}${path}`, auth);
    // The same body, so both servers send the same bytes; the bare route serialises it per request.
    const bare = await startBareServer('/bare', JSON.parse(answer));
    closers.push(() => bare.app.close());
    await fetchOnce(bare.url);

    const targets: HttpTarget[] = [
      { name: BARE, url: bare.url },
      { name: SUBJECT, url: `${gateway.url}${path}`, headers: auth },
    ];
    if (options.variants) targets.push(...(await startVariants(fixture, gateway.url, path, auth, closers)));
    for (const t of targets) await fetchOnce(t.url, t.headers);

    const measured = await measureTargets(targets, { ...options, progress });
    for (const [name, load] of measured) {
      progress(`${name}: ${describe(load)}`);
      if (load.non2xx + load.errors > 0) progress(`!!! ${name}: ${load.non2xx} non-2xx responses and ${load.errors} errors: its figures are not valid`);
    }
    const baseline = measured.get(BARE)!;
    const results = rows(SUBJECT, measured.get(SUBJECT)!, baseline, true);
    results.push(correctnessRow(BARE, 'non-2xx + errors', baseline.non2xx + baseline.errors));
    for (const t of targets.slice(2)) results.push(...rows(t.name, measured.get(t.name)!, baseline, false));
    return results;
  } finally {
    for (const close of closers.reverse()) await close().catch((err: Error) => progress(`cleanup: ${err.message}`));
  }
}

export const catalogBenchmark: Benchmark = {
  name: 'catalog',
  description: 'authenticated GET /v1/catalog/vendors/:vendorId/denominations against a bare Fastify route: req/s, p50/p99 latency, ratio',
  run,
};
