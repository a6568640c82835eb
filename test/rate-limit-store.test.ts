import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createBatchedRateLimitStore,
  type BatchedRateLimitOptions,
  type BatchedRateLimiter,
  type BatchedRateLimitStore,
  type RateLimitResult,
} from '../src/platform/http/batched-rate-limit-store.js';
import { createRedis, waitForRedis, type Redis } from '../src/platform/redis.js';
import { createTestContext } from './helpers/context.js';
import { TEST_REDIS_URL, uniqueId } from './helpers/env.js';

/**
 * The rate-limit store against the real Redis: exact counts, one command per key per turn. Each
 * "instance" is a limiter on its own producer connection, as two gateway processes would be;
 * each test has its own key prefix.
 */

const WINDOW_MS = 60_000;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nextTurn = () => new Promise((r) => setImmediate(r));

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
    const limiter = createBatchedRateLimitStore({ nameSpace, ...opts, redis });
    limiters.push(limiter);
    // As the plugin does: `new Store(globalParams)`.
    return { redis, limiter, store: new limiter.Store({ continueExceeding: false, exponentialBackoff: false }) };
  }

  const counter = async (key: string) => Number((await admin.get(`${nameSpace}${key}`)) ?? 0);

  it('answers the requests of one turn with one command, each with its exact position', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance();
    const calls = Array.from({ length: 50 }, () => incr(store, 'k', 1000));
    expect(calls.some((c) => c.sync)).toBe(false); // every answer comes from Redis
    const results = await Promise.all(calls.map((c) => c.result));
    expect(results.map((r) => r.current)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(limiter.commandsSent()).toBe(1);
    for (const r of results) expect(r.ttl).toBeGreaterThan(WINDOW_MS - 5_000);
    expect(await counter('k')).toBe(50);
    // The next turn is a new command, continuing the count.
    expect((await incr(store, 'k', 1000).result).current).toBe(51);
    expect(limiter.commandsSent()).toBe(2);
  });

  it('sends one command per key in a turn, and keeps keys apart', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance();
    const a = [incr(store, 'a', 10), incr(store, 'a', 10)];
    const b = [incr(store, 'b', 10)];
    expect((await Promise.all(a.map((c) => c.result))).map((r) => r.current)).toEqual([1, 2]);
    expect((await b[0]!.result).current).toBe(1);
    expect(limiter.commandsSent()).toBe(2);
  });

  it('never lets a key past its budget, whatever the mix of instances and turns', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const one = await instance();
    const two = await instance();
    const calls: Call[] = [];
    // 162 requests for a budget of 100, from two instances, in bursts of different sizes.
    for (let burst = 0; calls.length < 162; burst++) {
      for (let i = 0; i < 1 + (burst % 17) && calls.length < 162; i++) calls.push(incr(calls.length % 2 === 0 ? one.store : two.store, 'k', 100));
      if (burst % 3 === 0) await nextTurn();
    }
    const currents = (await Promise.all(calls.map((c) => c.result))).map((r) => r.current);
    // Every position from 1 to 162 handed out exactly once: exactly 100 requests are within budget.
    expect([...currents].sort((x, y) => x - y)).toEqual(Array.from({ length: 162 }, (_, i) => i + 1));
    expect(currents.filter((c) => c <= 100)).toHaveLength(100);
    expect(await counter('k')).toBe(162);
    expect(one.limiter.commandsSent() + two.limiter.commandsSent()).toBeLessThan(162);
  });

  it('starts the count again at 1 when the window ends', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { store } = await instance();
    expect((await incr(store, 'k', 10, 300).result).current).toBe(1);
    expect((await incr(store, 'k', 10, 300).result).current).toBe(2);
    await delay(400);
    const fresh = await incr(store, 'k', 10, 300).result;
    expect(fresh.current).toBe(1);
    expect(fresh.ttl).toBeGreaterThan(0);
    expect(fresh.ttl).toBeLessThanOrEqual(300);
  });

  it('read() answers the count in Redis without counting', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { store } = await instance();
    expect(await read(store, 'k')).toEqual({ current: 0, ttl: 0 });
    await Promise.all([incr(store, 'k', 10).result, incr(store, 'k', 10).result]);
    const now = await read(store, 'k');
    expect(now.current).toBe(2);
    expect(now.ttl).toBeGreaterThan(0);
    expect(await counter('k')).toBe(2);
  });

  it('answers every waiting request with the error when Redis is unreachable', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const unreachable = createRedis('redis://127.0.0.1:1', 'producer');
    const { limiter, store } = await instance({ redis: unreachable });
    const calls = [incr(store, 'k', 1000), incr(store, 'k', 1000)];
    for (const call of calls) await expect(call.result).rejects.toThrow();
    await expect(read(store, 'k')).rejects.toThrow();
    await expect(limiter.flush()).resolves.toBeUndefined();
  });

  it('counts again once a lost connection is back', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { redis, store } = await instance();
    expect((await incr(store, 'k', 1000).result).current).toBe(1);
    await cut(redis);
    await expect(incr(store, 'k', 1000).result).rejects.toThrow();
    await reconnect(redis);
    expect((await incr(store, 'k', 1000).result).current).toBe(2);
  });

  it('close() sends what waits for the end of the turn and waits for the answers', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance();
    const calls = [incr(store, 'k', 1000), incr(store, 'k', 1000), incr(store, 'k', 1000)];
    await limiter.close();
    expect(await counter('k')).toBe(3);
    expect((await calls[2]!.result).current).toBe(3);
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
  it('counts every request of a key in Redis, and GET /v1/me reports the budget', async () => {
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
