import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createBatchedRateLimitStore,
  LOCAL_FRACTION,
  SYNC_MAX_AGE_MS,
  type BatchedRateLimitOptions,
  type BatchedRateLimiter,
  type BatchedRateLimitStore,
  type RateLimitResult,
} from '../src/platform/http/batched-rate-limit-store.js';
import { createRedis, waitForRedis, type Redis } from '../src/platform/redis.js';
import { createTestContext } from './helpers/context.js';
import { TEST_REDIS_URL, uniqueId } from './helpers/env.js';

/**
 * The batched rate-limit store against the real Redis. Each "instance" is a limiter on its own
 * producer connection, as two gateway processes would be; each test has its own key prefix.
 */

const WINDOW_MS = 60_000;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Call {
  /** The callback ran before incr returned. */
  sync: boolean;
  result: Promise<RateLimitResult>;
}

function incr(store: BatchedRateLimitStore, key: string, max: number, windowMs = WINDOW_MS): Call {
  let answered = false;
  const result = new Promise<RateLimitResult>((resolve, reject) => {
    store.incr(
      key,
      (err, res) => {
        answered = true;
        if (err) reject(err);
        else resolve(res!);
      },
      windowMs,
      max,
    );
  });
  return { sync: answered, result };
}

/** A real failure: the connection goes away (fail-fast producer: no offline queue, commands fail). */
async function cut(redis: Redis): Promise<void> {
  const ended = new Promise((resolve) => redis.once('end', resolve));
  redis.disconnect();
  await ended;
}

async function reconnect(redis: Redis): Promise<void> {
  await redis.connect();
  await waitForRedis(redis);
}

function read(store: BatchedRateLimitStore, key: string): Promise<RateLimitResult> {
  return new Promise((resolve, reject) => store.read(key, (err, res) => (err ? reject(err) : resolve(res!))));
}

describe('batched rate-limit store', () => {
  let admin: Redis;
  const connections: Redis[] = [];
  const limiters: BatchedRateLimiter[] = [];
  let nameSpace: string;

  beforeAll(async () => {
    admin = createRedis(TEST_REDIS_URL, 'producer');
    await waitForRedis(admin);
  });
  afterEach(async () => {
    await Promise.all(limiters.splice(0).map((l) => l.close()));
    for (const c of connections.splice(0)) c.disconnect();
    const keys = await admin.keys(`${nameSpace}*`);
    if (keys.length > 0) await admin.del(...keys);
  });
  afterAll(async () => {
    await admin.quit();
  });

  /** One gateway instance: its own connection and limiter, on this test's namespace. */
  async function instance(opts: Partial<BatchedRateLimitOptions> = {}): Promise<{ redis: Redis; limiter: BatchedRateLimiter; store: BatchedRateLimitStore }> {
    const redis = opts.redis ?? createRedis(TEST_REDIS_URL, 'producer');
    connections.push(redis);
    if (opts.redis === undefined) await waitForRedis(redis);
    // A clock that stands still unless a test says otherwise: the local path then does not depend
    // on how fast this machine runs the test (state is trusted for only SYNC_MAX_AGE_MS).
    const limiter = createBatchedRateLimitStore({ nameSpace, now: () => 1_000_000, ...opts, redis });
    limiters.push(limiter);
    // As the plugin does: `new Store(globalParams)`.
    return { redis, limiter, store: new limiter.Store({ continueExceeding: false, exponentialBackoff: false }) };
  }

  const counter = async (key: string) => Number((await admin.get(`${nameSpace}${key}`)) ?? 0);

  it('far from the limit, counts locally and answers synchronously; a flush sends the batch', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance({ flushIntervalMs: 60_000 });
    const first = incr(store, 'k', 1000);
    expect(first.sync).toBe(false); // no state yet: Redis answers
    const answers = [(await first.result).current];
    const calls = Array.from({ length: 99 }, () => incr(store, 'k', 1000));
    expect(calls.every((c) => c.sync)).toBe(true);
    for (const c of calls) {
      const res = await c.result;
      answers.push(res.current);
      expect(res.ttl).toBeGreaterThan(WINDOW_MS - 5_000);
      expect(res.ttl).toBeLessThanOrEqual(WINDOW_MS);
    }
    expect(answers).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(await counter('k')).toBe(1); // the 99 are still here

    await limiter.flush();
    expect(await counter('k')).toBe(100);
    const ttl = await admin.pttl(`${nameSpace}k`);
    expect(ttl).toBeGreaterThan(WINDOW_MS - 5_000);
    expect(ttl).toBeLessThanOrEqual(WINDOW_MS);
  });

  it(`goes to Redis, carrying the pending counts, once the estimate passes ${LOCAL_FRACTION * 100}% of max`, async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { store } = await instance({ flushIntervalMs: 60_000 });
    await incr(store, 'k', 100).result;
    const local = Array.from({ length: 79 }, () => incr(store, 'k', 100));
    expect(local.every((c) => c.sync)).toBe(true);
    expect((await local.at(-1)!.result).current).toBe(80);

    const near = incr(store, 'k', 100);
    expect(near.sync).toBe(false);
    expect((await near.result).current).toBe(81);
    expect(await counter('k')).toBe(81); // 1 + 79 carried + this one
  });

  it('sends pending counts on its own within the flush interval', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { store } = await instance();
    await incr(store, 'k', 1000).result;
    for (let i = 0; i < 9; i++) expect(incr(store, 'k', 1000).sync).toBe(true);
    expect(await counter('k')).toBe(1);
    await expect.poll(() => counter('k'), { timeout: 1_000, interval: 20 }).toBe(10);
  });

  it('with a small max every decision is exact: the 6th request is refused, also across two instances', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const a = await instance();
    const b = await instance();

    const alone: number[] = [];
    for (let i = 0; i < 6; i++) {
      const call = incr(a.store, 'alone', 5);
      expect(call.sync).toBe(false);
      alone.push((await call.result).current);
    }
    expect(alone).toEqual([1, 2, 3, 4, 5, 6]); // current > max: refused

    const shared: number[] = [];
    for (let i = 0; i < 7; i++) {
      const call = incr((i % 2 === 0 ? a : b).store, 'shared', 5);
      expect(call.sync).toBe(false);
      shared.push((await call.result).current);
    }
    expect(shared.map((c) => c <= 5)).toEqual([true, true, true, true, true, false, false]);
    expect(await counter('shared')).toBe(7);
  });

  it('two instances near the limit refuse exactly at it', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const a = await instance({ flushIntervalMs: 60_000 });
    const b = await instance({ flushIntervalMs: 60_000 });
    await incr(a.store, 'k', 100).result;
    for (let i = 0; i < 79; i++) incr(a.store, 'k', 100);
    await a.limiter.flush();
    expect(await counter('k')).toBe(80);

    const answers: number[] = [];
    for (let i = 0; i < 30; i++) {
      const call = incr((i % 2 === 0 ? b : a).store, 'k', 100);
      expect(call.sync).toBe(false);
      answers.push((await call.result).current);
    }
    expect(answers).toEqual(Array.from({ length: 30 }, (_, i) => 81 + i));
    expect(answers.filter((c) => c <= 100)).toHaveLength(20);
  });

  it('two instances far from the limit: after both flush, Redis holds the total of both', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    let now = 1_000_000;
    const a = await instance({ flushIntervalMs: 60_000, now: () => now });
    const b = await instance({ flushIntervalMs: 60_000 });
    await incr(a.store, 'k', 1000).result;
    expect((await incr(b.store, 'k', 1000).result).current).toBe(2);
    for (let i = 0; i < 120; i++) incr((i % 2 === 0 ? a : b).store, 'k', 1000);
    expect(await counter('k')).toBe(2);
    await Promise.all([a.limiter.flush(), b.limiter.flush()]);
    expect(await counter('k')).toBe(122);
    // Once A's view is older than SYNC_MAX_AGE_MS, its next request asks Redis, and sees B's counts.
    now += SYNC_MAX_AGE_MS + 1;
    expect((await incr(a.store, 'k', 1000).result).current).toBe(123);
  });

  it('restarts the count at 1 when the window ends, without carrying counts of the old window', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance({ flushIntervalMs: 60_000, now: () => performance.now() });
    const first = await incr(store, 'k', 1000, 1_000).result;
    expect(first).toMatchObject({ current: 1 });
    expect(first.ttl).toBeGreaterThan(500);
    expect(first.ttl).toBeLessThanOrEqual(1_000);
    for (let i = 0; i < 10; i++) expect(incr(store, 'k', 1000, 1_000).sync).toBe(true);

    await delay(1_100);
    expect(await admin.exists(`${nameSpace}k`)).toBe(0);
    const next = incr(store, 'k', 1000, 1_000);
    expect(next.sync).toBe(false);
    expect((await next.result).current).toBe(1);
    await limiter.flush();
    expect(await counter('k')).toBe(1);
  });

  it('trusts a count seen in Redis only for a short while', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    let now = 1_000_000;
    const a = await instance({ flushIntervalMs: 60_000, now: () => now });
    const b = await instance({ flushIntervalMs: 60_000 });
    await incr(a.store, 'k', 1000).result;
    expect(incr(a.store, 'k', 1000).sync).toBe(true);
    await a.limiter.flush();
    // Another instance counts 50 and flushes them; A's view is stale after a while.
    await incr(b.store, 'k', 1000).result;
    for (let i = 0; i < 49; i++) incr(b.store, 'k', 1000);
    await b.limiter.flush();

    now += 1_000;
    const stale = incr(a.store, 'k', 1000);
    expect(stale.sync).toBe(false);
    expect((await stale.result).current).toBe(53);
    expect(incr(a.store, 'k', 1000).sync).toBe(true);
  });

  it('read() answers from Redis plus this instance’s pending counts, without counting', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { store } = await instance({ flushIntervalMs: 60_000 });
    expect(await read(store, 'k')).toEqual({ current: 0, ttl: 0 });
    await incr(store, 'k', 1000).result;
    for (let i = 0; i < 10; i++) incr(store, 'k', 1000);
    const seen = await read(store, 'k');
    expect(seen.current).toBe(11);
    expect(seen.ttl).toBeGreaterThan(0);
    expect(await counter('k')).toBe(1);
  });

  it('when Redis is unreachable the exact path answers with an error', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const unreachable = createRedis('redis://127.0.0.1:1', 'producer');
    const { limiter, store } = await instance({ redis: unreachable });
    const call = incr(store, 'k', 1000);
    expect(call.sync).toBe(false);
    await expect(call.result).rejects.toThrow();
    await expect(read(store, 'k')).rejects.toThrow();
    await expect(limiter.flush()).resolves.toBeUndefined();
  });

  it('keeps batched counts when a flush fails and sends them with a later one', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { redis, limiter, store } = await instance({ flushIntervalMs: 60_000 });
    await incr(store, 'k', 1000).result;
    for (let i = 0; i < 10; i++) expect(incr(store, 'k', 1000).sync).toBe(true);

    await cut(redis);
    await expect(limiter.flush()).resolves.toBeUndefined();
    expect(await counter('k')).toBe(1);
    // The state is still fresh (the clock stands still), so this one is counted locally and kept too.
    expect(incr(store, 'k', 1000).sync).toBe(true);

    await reconnect(redis);
    await limiter.flush();
    expect(await counter('k')).toBe(12);
  });

  it('puts back the pending counts an exact request carried when it fails', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { redis, limiter, store } = await instance({ flushIntervalMs: 60_000 });
    await incr(store, 'k', 100).result;
    for (let i = 0; i < 79; i++) incr(store, 'k', 100);
    await cut(redis);
    // Near the limit: goes to Redis with the 79 pending, and fails; the request itself is not kept.
    await expect(incr(store, 'k', 100).result).rejects.toThrow();
    await reconnect(redis);
    await limiter.flush();
    expect(await counter('k')).toBe(80);
  });

  it('close() sends what is pending, and afterwards every request goes to Redis', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance({ flushIntervalMs: 60_000 });
    await incr(store, 'k', 1000).result;
    for (let i = 0; i < 10; i++) incr(store, 'k', 1000);
    await limiter.close();
    expect(await counter('k')).toBe(11);
    const after = incr(store, 'k', 1000);
    expect(after.sync).toBe(false);
    expect((await after.result).current).toBe(12);
  });

  it('names route stores as RedisStore does, and refuses options it does not implement', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance();
    expect(store.prefix).toBe(nameSpace);
    const child = store.child({ routeInfo: { method: 'GET', url: '/v1/me' } });
    expect(child.prefix).toBe(`${nameSpace}GET/v1/me-`);
    await incr(child, 'k', 5).result;
    expect(await admin.get(`${nameSpace}GET/v1/me-k`)).toBe('1');
    expect(() => new limiter.Store({ continueExceeding: true })).toThrow(/continueExceeding/);
    expect(() => store.child({ exponentialBackoff: true, routeInfo: {} })).toThrow(/exponentialBackoff/);
  });
});

describe('rate-limit plugin with the batched store', () => {
  it('flushes pending counts when the app closes', async () => {
    const ctx = await createTestContext({ RATE_LIMIT_MAX: '1000', RATE_LIMIT_WINDOW_MS: '60000' });
    try {
      const app = await ctx.app();
      const key = await ctx.key(['catalog:read']);
      const statuses = [];
      for (let i = 0; i < 10; i++) {
        const res = await app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${key}` } });
        statuses.push(res.statusCode);
        expect(res.json().rateLimit.remaining).toBe(1000 - i - 1);
      }
      expect(statuses.every((s) => s === 200)).toBe(true);
      const [counterKey] = await ctx.redis.keys(`${ctx.prefix}:ratelimit:*`);
      expect(counterKey).toBeDefined();
      await app.close();
      expect(await ctx.redis.get(counterKey!)).toBe('10');
    } finally {
      await ctx.close();
    }
  });
});
