import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import type { PrismaClient } from '../src/platform/db.js';
import { createRedis } from '../src/platform/redis.js';
import { generateApiKey, hashApiKey, parseApiKey } from '../src/security/api-key-format.js';
import { createApiKeyService, listenForRevocations } from '../src/security/api-keys.js';
import { createTestContext, type TestContext } from './helpers/context.js';

describe('API keys and scopes', () => {
  let ctx: TestContext;
  let app: App;

  beforeAll(async () => {
    ctx = await createTestContext();
    app = await ctx.app({
      configure: (a) => {
        a.get('/test/orders', { onRequest: a.requireScopes('orders:write') }, async (request) => ({ key: request.apiKey?.name }));
      },
    });
  });
  afterAll(() => ctx.close());

  it('generates keys with 256-bit secrets and a visible prefix', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).toMatch(/^gwk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.key.split('_').slice(2).join('_'), 'base64url')).toHaveLength(32);
    expect(a.key).not.toBe(b.key);
    expect(parseApiKey(a.key)).toEqual({ prefix: a.prefix });
    expect(parseApiKey('gwk_short')).toBeUndefined();
  });

  it('stores only a hash of the key, never the key', async () => {
    const key = await ctx.key(['catalog:read']);
    const { prefix } = parseApiKey(key)!;
    const row = await ctx.prisma.apiKey.findUniqueOrThrow({ where: { prefix } });
    expect(row.secretHash).toBe(hashApiKey(key));
    expect(JSON.stringify(row)).not.toContain(key.slice(-43));
  });

  it('accepts a valid key and tells who it is', async () => {
    const key = await ctx.key(['catalog:read', 'orders:read'], 'storefront-eu');
    const res = await app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'storefront-eu', prefix: parseApiKey(key)!.prefix, scopes: ['catalog:read', 'orders:read'] });
    expect(res.body).not.toContain(key);
  });

  it.each([
    ['no header', undefined],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['a malformed key', 'Bearer not-a-key'],
    ['an unknown key', `Bearer ${generateApiKey().key}`],
  ])('answers %s with 401 problem details', async (_label, authorization) => {
    const res = await app.inject({ method: 'GET', url: '/v1/me', headers: authorization ? { authorization } : {} });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.json().code).toBe('unauthorized');
  });

  it('answers a key with the right prefix but the wrong secret with 401', async () => {
    const key = await ctx.key(['admin']);
    const forged = `${key.slice(0, -4)}AAAA`;
    const res = await app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${forged}` } });
    expect(res.statusCode).toBe(401);
  });

  it('answers a missing scope with 403, and lets admin through', async () => {
    const reader = await ctx.key(['catalog:read']);
    const denied = await app.inject({ method: 'GET', url: '/test/orders', headers: { authorization: `Bearer ${reader}` } });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ code: 'forbidden', requiredScopes: ['orders:write'] });
    const writer = await ctx.key(['orders:write']);
    expect((await app.inject({ method: 'GET', url: '/test/orders', headers: { authorization: `Bearer ${writer}` } })).statusCode).toBe(200);
    const admin = await ctx.key(['admin']);
    expect((await app.inject({ method: 'GET', url: '/test/orders', headers: { authorization: `Bearer ${admin}` } })).statusCode).toBe(200);
  });

  it('stops accepting a revoked key at once, on this and on other instances', async () => {
    // A second instance: its own key cache, told of revocations over Redis pub/sub.
    const otherKeys = createApiKeyService({ prisma: ctx.prisma, log: ctx.log, redis: ctx.redis, channel: ctx.apiKeys.channel });
    const subscriber = createRedis(ctx.config.redisUrl, 'subscriber');
    const stopListening = await listenForRevocations(subscriber, otherKeys);
    const other = await ctx.app({ apiKeys: otherKeys });
    try {
      const key = await ctx.key(['catalog:read']);
      const headers = { authorization: `Bearer ${key}` };
      expect((await app.inject({ method: 'GET', url: '/v1/me', headers })).statusCode).toBe(200);
      expect((await other.inject({ method: 'GET', url: '/v1/me', headers })).statusCode).toBe(200);

      const announced = new Promise<void>((resolve) => subscriber.once('message', () => resolve()));
      const revoked = await ctx.apiKeys.revoke(parseApiKey(key)!.prefix);
      expect(revoked?.summary.revokedAt).toBeInstanceOf(Date);
      expect(revoked?.notified).toBeGreaterThanOrEqual(1);
      expect((await app.inject({ method: 'GET', url: '/v1/me', headers })).statusCode).toBe(401);
      await announced;
      expect((await other.inject({ method: 'GET', url: '/v1/me', headers })).statusCode).toBe(401);
    } finally {
      await stopListening();
      await subscriber.quit();
    }
  });

  /** The real database behind a counting, pausable `findUnique`, as the key service sees it. */
  function instrumentedPrisma() {
    const real = ctx.prisma.apiKey;
    const probe = {
      lookups: [] as string[],
      /** When set, the next lookup reads its row, then waits for this before answering. */
      pauseNext: undefined as { reached: () => void; release: Promise<void> } | undefined,
    };
    const apiKey = {
      findUnique: async (args: { where: { prefix: string } }) => {
        probe.lookups.push(args.where.prefix);
        const row = await real.findUnique(args);
        const pause = probe.pauseNext;
        probe.pauseNext = undefined;
        if (pause) {
          pause.reached();
          await pause.release;
        }
        return row;
      },
      findFirst: (args: never) => real.findFirst(args),
      findMany: (args: never) => real.findMany(args),
      update: (args: never) => real.update(args),
      create: (args: never) => real.create(args),
    };
    return { prisma: { apiKey } as unknown as PrismaClient, probe };
  }

  it('does not cache a key as valid when it is revoked while its lookup is in flight', async () => {
    const { prisma, probe } = instrumentedPrisma();
    const service = createApiKeyService({ prisma, log: ctx.log, cacheTtlMs: 60_000 });
    const key = await ctx.key(['catalog:read']);
    let reached!: () => void;
    let release!: () => void;
    const atQuery = new Promise<void>((resolve) => (reached = resolve));
    probe.pauseNext = { reached, release: new Promise<void>((resolve) => (release = resolve)) };

    const lookup = service.authenticate(key);
    await atQuery; // the lookup holds the row as it was: not revoked
    expect((await service.revoke(parseApiKey(key)!.prefix))?.summary.revokedAt).toBeInstanceOf(Date);
    release();
    expect(await lookup).toBeUndefined();
    expect(await service.authenticate(key)).toBeUndefined();
    expect(probe.lookups).toHaveLength(2); // read again once, then cached as revoked
  });

  it('keeps keys in use cached while a flood of unknown keys passes through (LRU)', async () => {
    const { prisma, probe } = instrumentedPrisma();
    const service = createApiKeyService({ prisma, log: ctx.log, cacheTtlMs: 60_000, cacheMaxEntries: 4 });
    const key = await ctx.key(['catalog:read']);
    const { prefix } = parseApiKey(key)!;
    expect(await service.authenticate(key)).toBeDefined();
    for (let i = 0; i < 20; i++) {
      expect(await service.authenticate(generateApiKey().key)).toBeUndefined();
      expect(await service.authenticate(key)).toBeDefined();
    }
    expect(probe.lookups.filter((p) => p === prefix)).toHaveLength(1);
    expect(probe.lookups).toHaveLength(21);
    expect(service.cachedCount()).toBeLessThanOrEqual(4);
  });

  it('answers a key in use from memory, and stops at once on revocation or expiry', async () => {
    const { prisma, probe } = instrumentedPrisma();
    let clock = 1_000_000;
    const service = createApiKeyService({ prisma, log: ctx.log, cacheTtlMs: 10_000, now: () => clock });
    const key = await ctx.key(['catalog:read']);
    const { prefix } = parseApiKey(key)!;
    expect(service.authenticateCached(key)).toBe('pending');
    expect((await service.authenticate(key))?.prefix).toBe(prefix);
    for (let i = 0; i < 3; i++) expect(service.authenticateCached(key)).toMatchObject({ prefix });
    // The same prefix with another secret is checked against the hash, not waved through.
    expect(service.authenticateCached(`${key.slice(0, -4)}AAAA`)).toBeUndefined();
    expect(service.authenticateCached(key)).toMatchObject({ prefix });
    expect(probe.lookups).toEqual([prefix]);

    clock += 10_000; // the cache entry expires: the remembered key expires with it
    expect(service.authenticateCached(key)).toBe('pending');
    expect(await service.authenticate(key)).toBeDefined();
    expect(service.authenticateCached(key)).toMatchObject({ prefix });

    service.forget(prefix); // a revocation announced by another instance
    expect(service.authenticateCached(key)).toBe('pending');
    await ctx.apiKeys.revoke(prefix);
    expect(await service.authenticate(key)).toBeUndefined();
    expect(service.authenticateCached(key)).toBeUndefined();
    expect(probe.lookups).toEqual([prefix, prefix, prefix]);
  });

  it('never hands out the stored hash', async () => {
    const key = await ctx.key(['catalog:read']);
    const { prefix } = parseApiKey(key)!;
    const listed = (await ctx.apiKeys.list()).find((k) => k.prefix === prefix);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty('secretHash');
    const revoked = await ctx.apiKeys.revoke(prefix);
    expect(revoked?.summary).not.toHaveProperty('secretHash');
    expect(JSON.stringify(revoked)).not.toContain(hashApiKey(key));
  });

  it('never logs the presented key', async () => {
    const key = await ctx.key(['catalog:read']);
    await app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${key}` } });
    await app.inject({ method: 'GET', url: '/test/orders', headers: { authorization: `Bearer ${key}` } });
    expect(ctx.logs.lines.length).toBeGreaterThan(0);
    expect(ctx.logs.text).not.toContain(key.slice(-43));
  });
});
