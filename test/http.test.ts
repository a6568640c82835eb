import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { AppError } from '../src/errors.js';
import { ReadinessFailure } from '../src/platform/http/health-routes.js';
import { createTestContext, type TestContext } from './helpers/context.js';

describe('HTTP foundation', () => {
  let ctx: TestContext;
  let app: App;

  beforeAll(async () => {
    ctx = await createTestContext();
    app = await ctx.app({
      configure: (a) => {
        a.post(
          '/test/echo',
          { schema: { body: Type.Object({ quantity: Type.Integer({ minimum: 1, maximum: 10 }) }, { additionalProperties: false }) } },
          async (request) => request.body,
        );
        a.get('/test/read', async () => ({ ok: true }));
        a.get('/test/boom', async () => {
          throw new Error('database password is hunter2');
        });
        a.get('/test/app-error', async () => {
          throw new AppError('card_not_found', 'No denomination with cardId "X".', { details: { cardId: 'X' } });
        });
      },
    });
  });
  afterAll(() => ctx.close());

  it('answers /healthz', async () => {
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with each dependency checked', async () => {
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.status).toBe('ready');
    expect(body.checks.database.ok).toBe(true);
    expect(body.checks.redis.ok).toBe(true);
  });

  it('answers /readyz with 503 when a critical dependency fails, but not for a non-critical one', async () => {
    const failing = await ctx.app({
      readinessChecks: [
        { name: 'database', check: async () => undefined },
        { name: 'redis', check: () => Promise.reject(new Error('connect ECONNREFUSED 10.1.2.3:6380')) },
        { name: 'catalog', critical: false, check: () => Promise.reject(new Error('stale since 2026-01-01, sync host sync.internal')) },
      ],
    });
    const res = await failing.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['x-request-id']).toEqual(expect.any(String)); // as on every error answer
    expect(res.json()).toMatchObject({
      status: 'unready',
      checks: { database: { ok: true }, redis: { ok: false, error: 'unavailable' }, catalog: { ok: false, error: 'unavailable' } },
    });
    expect(res.body).not.toMatch(/ECONNREFUSED|10\.1\.2\.3|6380|sync\.internal/);
    expect(ctx.logs.text).toContain('ECONNREFUSED 10.1.2.3:6380');
  });

  it('answers /readyz with fixed words for a timeout and for a check\'s own public reason', async () => {
    const slow = await ctx.app({
      readinessChecks: [
        { name: 'database', check: () => new Promise<void>(() => undefined) },
        { name: 'catalog', critical: false, check: () => Promise.reject(new ReadinessFailure('stale', { ageSeconds: 200_000 })) },
        { name: 'odd', critical: false, check: () => Promise.reject(new ReadinessFailure('Host db.internal refused')) },
      ],
    });
    const res = await slow.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json().checks).toMatchObject({
      database: { ok: false, error: 'timeout' },
      catalog: { ok: false, error: 'stale', details: { ageSeconds: 200_000 } },
      odd: { ok: false, error: 'unavailable' },
    });
    expect(res.body).not.toContain('db.internal');
  });

  it('answers unknown routes with a 404 problem', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/nothing-here?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 404, code: 'route_not_found', title: 'Not Found' });
  });

  it('answers schema violations with 400 validation_failed and where', async () => {
    const res = await app.inject({ method: 'POST', url: '/test/echo', payload: { quantity: 0 } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('validation_failed');
    expect(body.errors[0].path).toBe('body/quantity');
    const missing = await app.inject({ method: 'POST', url: '/test/echo', payload: {} });
    expect(missing.json().errors[0].path).toBe('body/quantity');
  });

  it('answers malformed JSON with 400 invalid_json, and other media types with 415', async () => {
    const bad = await app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload: '{"quantity":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_json');
    const xml = await app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/xml' }, payload: '<a/>' });
    expect(xml.statusCode).toBe(415);
    expect(xml.json().code).toBe('unsupported_media_type');
  });

  it('answers oversized bodies with 413', async () => {
    const res = await app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ quantity: 1, pad: 'x'.repeat(70_000) }) });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
  });

  it('turns unexpected errors into a 500 that reveals nothing, and logs them', async () => {
    const res = await app.inject({ method: 'GET', url: '/test/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ code: 'internal_error', detail: 'The gateway could not complete the request.' });
    expect(res.body).not.toContain('hunter2');
    expect(res.json().requestId).toBe(res.headers['x-request-id']);
    expect(ctx.logs.text).toContain('request failed');
  });

  it('writes one access line per request: info for writes and errors, debug for successful reads', async () => {
    const accessLines = (id: string) =>
      ctx.logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request' && l.reqId === id);
    await app.inject({ method: 'GET', url: '/test/read', headers: { 'x-request-id': 'access-read' } });
    await app.inject({ method: 'POST', url: '/test/echo', headers: { 'x-request-id': 'access-write' }, payload: { quantity: 2 } });
    await app.inject({ method: 'GET', url: '/test/app-error', headers: { 'x-request-id': 'access-error' } });
    // The test logger writes debug too; production's LOG_LEVEL=info keeps only the info lines.
    expect(accessLines('access-read')).toEqual([expect.objectContaining({ level: 20, method: 'GET', url: '/test/read', status: 200 })]);
    expect(accessLines('access-write')).toEqual([expect.objectContaining({ level: 30, method: 'POST', url: '/test/echo', status: 200 })]);
    expect(accessLines('access-error')).toEqual([expect.objectContaining({ level: 30, url: '/test/app-error', status: 404 })]);
    expect(accessLines('access-write')[0]!.ms).toEqual(expect.any(Number));
    // Fastify's own per-request lines are not written.
    expect(ctx.logs.text).not.toContain('incoming request');
    expect(ctx.logs.text).not.toContain('request completed');
  });

  it('sends x-request-id on every error, uses a client-sent one, and adds none to successes', async () => {
    const plain = await app.inject({ method: 'GET', url: '/healthz' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['x-request-id']).toBeUndefined();
    const missing = await app.inject({ method: 'GET', url: '/nowhere' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-request-id']).toBe(missing.json().requestId);
    const refused = await app.inject({ method: 'GET', url: '/test/app-error', headers: { 'x-request-id': 'storefront-42.a' } });
    expect(refused.headers['x-request-id']).toBe('storefront-42.a');
    expect(refused.json().requestId).toBe('storefront-42.a');
    // One that is not a safe id is replaced by a UUID of ours.
    const replaced = await app.inject({ method: 'GET', url: '/test/app-error', headers: { 'x-request-id': 'bad id\u00e9' } });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const malformedUrl = await app.inject({ method: 'GET', url: '/v1/catalog/vendors/%ED%A0%80/denominations' });
    expect(malformedUrl.statusCode).toBe(400);
    expect(malformedUrl.headers['x-request-id']).toBe(malformedUrl.json().requestId);
  });

  it('passes application errors through with their code and details', async () => {
    const res = await app.inject({ method: 'GET', url: '/test/app-error' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'card_not_found', cardId: 'X', detail: 'No denomination with cardId "X".' });
  });

  it('serves the OpenAPI document of every route at /docs', async () => {
    const res = await app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/v1/me']));
    expect(doc.components.schemas.ProblemDetails).toBeDefined();
    const ui = await app.inject({ method: 'GET', url: '/docs' });
    expect([200, 302]).toContain(ui.statusCode);
  });
});
