import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createCatalogCache } from '../../src/catalog/catalog-cache.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { createOrderWaiters } from '../../src/orders/order-waiters.js';
import { QUEUE_NAMES } from '../../src/platform/queues.js';
import { generateSecret, signedHeaders } from '../../src/platform/standard-webhooks.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { PATTERN_SAMPLES } from './generators.js';
import { enumerateRoutes, probesFor, routePatterns, type Probe, type RouteInfo } from './routes.js';
import { EXPECTED_TABLES, diff, snapshot, type Snapshot } from './snapshot.js';
import { withTimeout } from '../../src/platform/with-timeout.js';

/**
 * The bad-input suite: every route of the real app, with an admin key and with none, fed
 * generated invalid requests derived from its own schema. Every answer must be below 500 and,
 * when 4xx, an RFC 9457 problem with a stable code; after the whole run the database (row
 * counts and checksums of every table, sequences) and the BullMQ queues must be unchanged.
 */

const API_BODY_LIMIT = 64 * 1024;
/** Requests per admin key: well under RATE_LIMIT_MAX, so 429s do not hide the handlers. */
const REQUESTS_PER_KEY = 250;
const CONCURRENCY = 8;
const REQUEST_TIMEOUT_MS = 15_000;

interface Outcome {
  probe: Probe;
  status: number;
  contentType: string;
  body: string;
}

interface Failure {
  probe: Probe;
  problem: string;
  status?: number;
  body?: string;
}

const short = (v: unknown, n = 160) => {
  const s = Buffer.isBuffer(v) ? `<${v.length} bytes>` : typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s;
};

export function describeProbe(p: Probe): string {
  const headers = Object.entries(p.headers).map(([k, v]) => `${k}: ${short(v, 60)}`).join('; ');
  return `[${p.auth}] ${p.method} ${short(p.url, 120)} {${headers}}${p.body !== undefined ? ` body=${short(p.body, 120)}` : ''}  (${p.route} / ${p.name})`;
}


/** What an answer must look like; undefined when it is fine. */
export function judge(o: Outcome): string | undefined {
  if (o.status >= 500) return `${o.status} answer`;
  if (o.status < 400) {
    if (o.probe.method !== 'GET' && o.probe.method !== 'HEAD' && o.probe.method !== 'OPTIONS') return `${o.status} to an invalid write: the generator made a valid request, or the route accepts what it should refuse`;
    return undefined;
  }
  if (!/^application\/problem\+json/.test(o.contentType)) return `${o.status} without application/problem+json (content-type ${o.contentType || 'none'})`;
  if (o.probe.method === 'HEAD') return undefined;
  let body: { code?: unknown; status?: unknown };
  try {
    body = JSON.parse(o.body) as typeof body;
  } catch {
    return `${o.status} problem body is not JSON`;
  }
  if (typeof body.code !== 'string' || !(body.code in ERROR_STATUS)) return `${o.status} problem with unknown code ${String(body.code)}`;
  if (ERROR_STATUS[body.code as keyof typeof ERROR_STATUS] !== o.status || body.status !== o.status) return `${o.status} problem whose code ${body.code} means ${ERROR_STATUS[body.code as keyof typeof ERROR_STATUS]} (body.status ${String(body.status)})`;
  return undefined;
}

describe('bad input: every route, generated invalid requests', () => {
  let gw: TestGateway;
  let app: App;
  let secret: string;
  let routes: RouteInfo[];
  let probes: Probe[];
  let adminKeys: string[] = [];
  let before: Snapshot;
  const seededOrderIds: string[] = [];
  const seededWebhookIds: string[] = [];
  let storefront: string;
  const outcomes: Outcome[] = [];
  const failures: Failure[] = [];
  let unsendable = 0;

  async function quiet(): Promise<void> {
    // Wait until no job is waiting or running, so the snapshot is of a still system.
    for (let i = 0; i < 200; i++) {
      const counts = await Promise.all(QUEUE_NAMES.map((n) => gw.ctx.queues.get(n).getJobCounts('active', 'waiting', 'prioritized')));
      if (counts.every((c) => (c.active ?? 0) + (c.waiting ?? 0) + (c.prioritized ?? 0) === 0)) return;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    secret = generateSecret();
    // The real app, with a provider webhook secret so signed deliveries can be tested too.
    const catalog = createCatalogCache({ prisma: gw.ctx.prisma, log: gw.ctx.log, staleAfterMs: gw.ctx.config.catalog.staleAfterMs });
    await catalog.reload();
    app = await gw.ctx.app({
      catalog,
      busy: gw.busy,
      waiters: createOrderWaiters(),
      webhooks: { prisma: gw.ctx.prisma, queues: gw.ctx.queues, log: gw.ctx.log, secrets: [secret], config: gw.ctx.config.webhooks },
    });

    // Rows for the routes that take ids: a fulfilled order, a needs_attention one, a stored event.
    storefront = await gw.key();
    const ok = await gw.order(storefront, { cardId: '301', quantity: 1, reference: 'bad-input-seed' }, { idempotencyKey: 'bad-input-seed-1' });
    seededOrderIds.push((await gw.settled(storefront, ok.body.id)).id);
    gw.sandbox.sandbox.control.setFaults({ failNext: { 'confirm-order': 1000 } });
    const stuck = await gw.order(storefront, { cardId: '201', quantity: 1, reference: 'bad-input-seed' }, { idempotencyKey: 'bad-input-seed-2' });
    const attention = await gw.settled(storefront, stuck.body.id);
    gw.sandbox.sandbox.control.setFaults({ failNext: {} });
    expect(attention.status).toBe('needs_attention');
    seededOrderIds.push(attention.id);
    const event = JSON.stringify({ type: 'bad_input.unknown_type', timestamp: new Date().toISOString(), data: {} });
    const stored = await app.inject({ method: 'POST', url: '/webhooks/upstream', headers: { 'content-type': 'application/json', ...signedHeaders([secret], 'msg_bad_input_seed', event) }, payload: event });
    expect(stored.statusCode).toBe(204);
    seededWebhookIds.push('msg_bad_input_seed');

    routes = enumerateRoutes(app);
    probes = routes.flatMap((r) => probesFor(r, routes, { seededOrderIds, seededWebhookIds, apiBodyLimit: API_BODY_LIMIT, webhookBodyLimit: gw.ctx.config.webhooks.maxBodyBytes }));
    const adminCount = probes.filter((p) => p.auth === 'admin').length;
    adminKeys = [];
    for (let i = 0; i <= Math.ceil(adminCount / REQUESTS_PER_KEY); i++) adminKeys.push(await gw.ctx.key(['admin'], `bad-input-admin-${i}`));
    await quiet();
    before = await snapshot(gw.ctx.prisma, gw.ctx.queues);
  }, 60_000);
  afterAll(() => gw?.close());

  it('enumerates every route, each with a schema to derive from or a known reason not to', () => {
    const names = routes.map((r) => `${r.method} ${r.path}`);
    // The parse is right (a route the README names is found) …
    expect(names).toEqual(expect.arrayContaining(['POST /v1/orders', 'GET /v1/orders/:id', 'POST /webhooks/upstream', 'POST /v1/support/orders/:id/resolve', 'GET /console/*']));
    // … every route without an OpenAPI operation is a static one (docs, console), and every
    // pattern a schema uses has a sample to build valid-shaped requests from.
    expect(routes.filter((r) => !r.documented && !/^\/(docs|console)(\/|$)/.test(r.path)).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(routes.flatMap(routePatterns).filter((p) => !(p in PATTERN_SAMPLES))).toEqual([]);
    // Every route gets probes, with a key and without.
    for (const name of names) {
      expect(probes.some((p) => p.route === name && p.auth === 'admin'), name).toBe(true);
      expect(probes.some((p) => p.route === name && p.auth === 'none'), name).toBe(true);
    }
    for (const table of EXPECTED_TABLES) expect(Object.keys(before)).toContain(`table ${table}`);
  });

  it('answers every invalid request below 500, and every 4xx as a problem with a stable code', async () => {
    let adminSent = 0;
    let next = 0;
    const runOne = async (probe: Probe) => {
      const headers = { ...probe.headers };
      if (probe.auth === 'admin' && !('authorization' in headers)) headers.authorization = `Bearer ${adminKeys[Math.floor(adminSent++ / REQUESTS_PER_KEY)]!}`;
      let res;
      try {
        res = await withTimeout(app.inject({ method: probe.method as 'GET', url: probe.url, headers, ...(probe.body !== undefined ? { payload: probe.body } : {}) }), REQUEST_TIMEOUT_MS);
      } catch (err) {
        const message = (err as Error).message;
        if (/no answer within/.test(message)) failures.push({ probe, problem: message });
        else unsendable++; // refused by the HTTP client side (e.g. a header Node will not send)
        return;
      }
      const outcome: Outcome = { probe, status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), body: res.body };
      outcomes.push(outcome);
      const problem = judge(outcome);
      if (problem) {
        // For a 5xx, the logged error says why (the answer never does).
        const reqId = String(res.headers['x-request-id'] ?? '');
        const logged = res.statusCode >= 500 ? gw.ctx.logs.lines.find((l) => l.includes(reqId) && l.includes('request failed')) : undefined;
        const message = logged ? ((JSON.parse(logged) as { err?: { message?: string } }).err?.message ?? logged).replace(/\s+/g, ' ') : undefined;
        const cause = message ? ` [log: …${message.slice(-260)}]` : '';
        failures.push({ probe, problem, status: res.statusCode, body: short(res.body, 300) + cause });
      }
    };
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < probes.length) await runOne(probes[next++]!);
      }),
    );

    const byRoute = new Map<string, Map<number, number>>();
    for (const o of outcomes) {
      const statuses = byRoute.get(o.probe.route) ?? new Map<number, number>();
      statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
      byRoute.set(o.probe.route, statuses);
    }
    const lines = [...byRoute].map(([route, statuses]) => {
      const n = [...statuses.values()].reduce((a, b) => a + b, 0);
      return `  ${route}: ${n} requests, statuses ${[...statuses].sort(([a], [b]) => a - b).map(([s, c]) => `${s}×${c}`).join(' ')}`;
    });
    const fiveXx = outcomes.filter((o) => o.status >= 500).length;
    console.log(`bad-input: ${outcomes.length} requests to ${byRoute.size} routes (${unsendable} refused client-side), 5xx: ${fiveXx}, failures: ${failures.length}\n${lines.join('\n')}`);
    if (failures.length > 0) {
      // Grouped by route and kind of failure, three examples each: one bug, one paragraph.
      const groups = new Map<string, Failure[]>();
      for (const f of failures) {
        const kind = `${f.probe.route}: ${f.problem.replace(/\(content-type [^)]*\)|code \S+/g, '…')}`;
        groups.set(kind, [...(groups.get(kind) ?? []), f]);
      }
      const text = [...groups].map(([kind, fs]) => `  ${kind} ×${fs.length}\n${fs.slice(0, 3).map((f) => `      ${describeProbe(f.probe)}${f.body ? `\n        → ${f.body}` : ''}`).join('\n')}`);
      console.log(`bad-input failures (${failures.length}, ${groups.size} kinds):\n${text.join('\n')}`);
    }

    expect(outcomes.length).toBeGreaterThan(1000);
    expect(failures.map((f) => `${f.problem}: ${describeProbe(f.probe)}`)).toEqual([]);
  }, 90_000);

  it('changed nothing in the database or the queues', async () => {
    await quiet();
    const changes = diff(before, await snapshot(gw.ctx.prisma, gw.ctx.queues));
    console.log(`bad-input: db/queue changes after ${outcomes.length} requests: ${changes.length}${changes.length ? `\n  ${changes.join('\n  ')}` : ''}`);
    expect(changes).toEqual([]);
  });

  /**
   * Inputs valid to the schema but wrong in meaning, each checked on its own: below 500 always;
   * a refusal (4xx) must change nothing. Some are valid by design (a signed delivery is stored
   * whatever its type): those may change the database and are reported as accepted.
   */
  it('refuses schema-valid nonsense (signed odd deliveries, impossible actions) without 5xx or changes', async () => {
    const [fulfilledId, attentionId] = seededOrderIds as [string, string];
    const signed = (name: string, body: string, id = `msg_bad_input_${name.replace(/\W+/g, '_')}`) => ({
      name: `webhook signed: ${name}`,
      run: () => app.inject({ method: 'POST', url: '/webhooks/upstream', headers: { 'content-type': 'application/json', ...signedHeaders([secret], id, body) }, payload: body }),
    });
    const admin = () => `Bearer ${adminKeys.at(-1)!}`;
    const post = (name: string, url: string, body: unknown, headers: Record<string, string> = {}) => ({
      name,
      run: () => app.inject({ method: 'POST', url, headers: { authorization: admin(), 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) }),
    });
    const cases = [
      signed('not JSON', '{"type":'),
      signed('over the size limit', `{"type":"x","pad":"${'a'.repeat(gw.ctx.config.webhooks.maxBodyBytes)}"}`),
      signed('NUL in type', JSON.stringify({ type: 'order.created\u0000', data: {} })),
      signed('NUL in data', JSON.stringify({ type: 'bad_input.unknown', data: { note: 'a\u0000b' } })),
      signed('lone surrogate in data', JSON.stringify({ type: 'bad_input.unknown', data: { note: '\uD800' } })),
      signed('timestamp before PostgreSQL time', JSON.stringify({ type: 'bad_input.unknown', timestamp: '-271821-04-20T00:00:00.000Z', data: {} })),
      signed('timestamp after PostgreSQL time', JSON.stringify({ type: 'bad_input.unknown', timestamp: '+275760-09-13T00:00:00.000Z', data: {} })),
      signed('deeply nested data', `{"type":"bad_input.unknown","data":${'['.repeat(20_000)}${']'.repeat(20_000)}}`),
      signed('webhook-id of 10 000 characters', JSON.stringify({ type: 'bad_input.unknown', data: {} }), 'm'.repeat(10_000)),
      post('order: idempotency key reused with another body', '/v1/orders', { cardId: '301', quantity: 2 }, { 'idempotency-key': 'bad-input-seed-1', authorization: `Bearer ${storefront}` }),
      post('order: expected price that is not the price', '/v1/orders', { cardId: '301', quantity: 1, expectedUnitPrice: '9999999999999999.999999' }, { 'idempotency-key': 'bad-input-price' }),
      post('retry a fulfilled order', `/v1/support/orders/${fulfilledId}/retry`, { note: 'bad input' }),
      post('resolve a fulfilled order', `/v1/support/orders/${fulfilledId}/resolve`, { outcome: 'failed', note: 'bad input' }),
      post('resolve as fulfilled without cards', `/v1/support/orders/${attentionId}/resolve`, { outcome: 'fulfilled', note: 'bad input', cards: [] }),
      post('resolve as failed with cards', `/v1/support/orders/${attentionId}/resolve`, { outcome: 'failed', note: 'bad input', cards: [{ code: 'X', number: '1' }] }),
      post('reveal an order with no cards', `/v1/support/orders/${attentionId}/reveal`, { reason: 'bad input' }),
      post('order: NUL in reference', '/v1/orders', { cardId: '301', quantity: 1, reference: 'a\u0000b' }, { 'idempotency-key': 'bad-input-nul' }),
      post('reveal with NUL in the reason', `/v1/support/orders/${fulfilledId}/reveal`, { reason: 'a\u0000b' }),
      post('resolve with NUL in the note', `/v1/support/orders/${attentionId}/resolve`, { outcome: 'failed', note: 'a\u0000b' }),
    ];
    const problems: string[] = [];
    const report: string[] = [];
    for (const c of cases) {
      await quiet();
      const pre = await snapshot(gw.ctx.prisma, gw.ctx.queues);
      const res = await c.run();
      await quiet();
      const changes = diff(pre, await snapshot(gw.ctx.prisma, gw.ctx.queues));
      const code = res.statusCode >= 400 ? ` ${String(res.json<{ code?: string }>().code)}` : '';
      report.push(`  ${c.name}: ${res.statusCode}${code}${changes.length ? `, changed: ${changes.map((x) => x.split(':')[0]).join(', ')}` : ''}`);
      if (res.statusCode >= 500) problems.push(`${c.name}: ${res.statusCode}`);
      else if (res.statusCode >= 400 && changes.length > 0) problems.push(`${c.name}: refused (${res.statusCode}) but changed ${changes.join('; ')}`);
    }
    console.log(`bad-input, schema-valid nonsense (${cases.length} cases):\n${report.join('\n')}`);
    expect(problems).toEqual([]);
  }, 60_000);
});
