import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { createTestContext, type TestContext } from './helpers/context.js';

describe('rate limits per API key', () => {
  let ctx: TestContext;
  let a: App;
  let b: App;

  beforeAll(async () => {
    ctx = await createTestContext({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' });
    // Two instances on one Redis: they must share the counters.
    a = await ctx.app();
    b = await ctx.app();
  });
  afterAll(() => ctx.close());

  it('answers 429 with Retry-After once a key spends its budget, across instances', async () => {
    const key = await ctx.key(['catalog:read']);
    const headers = { authorization: `Bearer ${key}` };
    const answers = [];
    for (const app of [a, b, a]) answers.push(await app.inject({ method: 'GET', url: '/v1/me', headers }));
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    // Answers within the budget carry no rate-limit headers; /v1/me reports the budget instead.
    for (const r of answers) expect(Object.keys(r.headers).filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
    expect(answers.map((r) => r.json().rateLimit.remaining)).toEqual([2, 1, 0]);
    expect(answers[0]!.json().rateLimit).toMatchObject({ limit: 3 });
    expect(answers[0]!.json().rateLimit.resetSeconds).toBeGreaterThan(0);
    expect(answers[0]!.json().rateLimit.resetSeconds).toBeLessThanOrEqual(60);

    const limited = await b.inject({ method: 'GET', url: '/v1/me', headers });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.json()).toMatchObject({ code: 'rate_limited', status: 429, limit: 3 });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0' });
    expect(Number(limited.headers['x-ratelimit-reset'])).toBe(retryAfter);

    const counters = await ctx.redis.keys(`${ctx.prefix}:ratelimit:*`);
    expect(counters.length).toBeGreaterThan(0);
  });

  it('keeps a separate budget per key', async () => {
    const first = await ctx.key(['catalog:read']);
    const second = await ctx.key(['catalog:read']);
    for (let i = 0; i < 3; i++) await a.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${first}` } });
    expect((await a.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${first}` } })).statusCode).toBe(429);
    expect((await a.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${second}` } })).statusCode).toBe(200);
  });

  it('refuses a spent key before parsing its body, and an unknown key with 401 first', async () => {
    const key = await ctx.key(['orders:write']);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'rl-1' };
    for (let i = 0; i < 3; i++) expect((await a.inject({ method: 'POST', url: '/v1/orders', headers, payload: '{not json' })).statusCode).toBe(400);
    const spent = await a.inject({ method: 'POST', url: '/v1/orders', headers, payload: '{not json' });
    expect(spent.statusCode).toBe(429);
    const unknown = await a.inject({ method: 'POST', url: '/v1/orders', headers: { ...headers, authorization: 'Bearer gwk_aaaaaaaaaaaa_' + 'A'.repeat(43) }, payload: '{}' });
    expect(unknown.statusCode).toBe(401);
  });

  it('does not limit unauthenticated operational routes', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 6; i++) statuses.add((await a.inject({ method: 'GET', url: '/healthz' })).statusCode);
    expect([...statuses]).toEqual([200]);
  });
});
