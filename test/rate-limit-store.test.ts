import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createBatchedRateLimitStore,
  EXACT_FROM,
  LEASE_FRACTION,
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

  it('answers the requests of one turn with one command, each with its own position', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance();
    const calls = Array.from({ length: 8 }, () => incr(store, 'k', 10));
    expect(calls.some((c) => c.sync)).toBe(false); // every answer comes from Redis
    const results = await Promise.all(calls.map((c) => c.result));
    expect(results.map((r) => r.current)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(limiter.commandsSent()).toBe(1);
    for (const r of results) expect(r.ttl).toBeGreaterThan(WINDOW_MS - 5_000);
    expect(await counter('k')).toBe(8);
    // Below MIN_LEASED_MAX nothing is reserved: the next turn is a new command.
    expect((await incr(store, 'k', 10).result).current).toBe(9);
    expect(limiter.commandsSent()).toBe(2);
  });

  it(`far from the limit, reserves ${LEASE_FRACTION * 100}% of the budget and answers the next requests from it at once`, async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance();
    const first = await Promise.all([incr(store, 'k', 1000).result, incr(store, 'k', 1000).result]);
    expect(first.map((r) => r.current)).toEqual([1, 2]);
    expect(await counter('k')).toBe(2 + 1000 * LEASE_FRACTION); // the reserved positions count at once
    const local = Array.from({ length: 1000 * LEASE_FRACTION }, () => incr(store, 'k', 1000));
    expect(local.every((c) => c.sync)).toBe(true);
    expect((await Promise.all(local.map((c) => c.result))).map((r) => r.current)).toEqual(Array.from({ length: 50 }, (_, i) => i + 3));
    expect(limiter.commandsSent()).toBe(1);
    const next = incr(store, 'k', 1000);
    expect(next.sync).toBe(false); // reservation spent: Redis again
    expect((await next.result).current).toBe(53);
    expect(await read(store, 'k')).toMatchObject({ current: 53 }); // reserved-but-unused positions are not requests
  });

  it(`stops reserving once a key has used ${EXACT_FROM * 100}% of its budget`, async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance();
    await admin.set(`${nameSpace}k`, 85, 'PX', WINDOW_MS);
    expect((await incr(store, 'k', 100).result).current).toBe(86 + 0); // 85 seen elsewhere, 5 reserved with it
    expect(await counter('k')).toBe(91);
    // Seen past 80%: every further request is its own position from Redis, none reserved.
    const later = [];
    for (let i = 0; i < 5; i++) later.push(incr(store, 'k', 100));
    expect(later.every((c) => c.sync)).toBe(true); // the 5 reserved with the first
    await Promise.all(later.map((c) => c.result));
    const exact = incr(store, 'k', 100);
    expect(exact.sync).toBe(false);
    expect((await exact.result).current).toBe(92);
    expect(await counter('k')).toBe(92);
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

  it('never lets a key past its budget, whatever the mix of instances, turns and reservations', async () => {
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
    // Every request holds its own position: none is handed out twice, so at most 100 are within
    // the budget; positions the instances reserved and did not use can only make it fewer (at
    // most 5 each here).
    expect(new Set(currents).size).toBe(162);
    const admitted = currents.filter((c) => c <= 100).length;
    expect(admitted).toBeLessThanOrEqual(100);
    expect(admitted).toBeGreaterThanOrEqual(90);
    expect(await counter('k')).toBeGreaterThanOrEqual(162);
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
    expect((await incr(store, 'k', 10).result).current).toBe(1);
    await cut(redis);
    await expect(incr(store, 'k', 10).result).rejects.toThrow();
    await reconnect(redis);
    expect((await incr(store, 'k', 10).result).current).toBe(2);
  });

  it('flush() also sends what arrived while a command was out', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance();
    const first = incr(store, 'k', 10);
    await nextTurn(); // the first command is on its way
    const second = incr(store, 'k', 10); // waits for it, then goes with the next one
    await limiter.flush();
    expect(await counter('k')).toBe(2);
    expect((await second.result).current).toBe(2);
    expect((await first.result).current).toBe(1);
  });

  it('close() sends what waits for the end of the turn and waits for the answers', async () => {
    nameSpace = `${uniqueId('rls')}:ratelimit:`;
    const { limiter, store } = await instance();
    const calls = [incr(store, 'k', 10), incr(store, 'k', 10), incr(store, 'k', 10)];
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
      // The first request reserved 50 positions more (5% of 1000); the other nine used 9 of them.
      expect(await ctx.redis.get(counterKey!)).toBe('51');
    } finally {
      await ctx.close();
    }
  });
});
