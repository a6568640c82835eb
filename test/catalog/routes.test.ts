import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createCatalogCache, type CatalogCache } from '../../src/catalog/catalog-cache.js';
import { syncCatalog } from '../../src/catalog/sync-catalog.js';
import { createPrisma, type PrismaClient } from '../../src/platform/db.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { createIsolatedDatabase } from '../helpers/database.js';
import { seed, startSandbox, type SandboxWithClient } from '../helpers/sandbox.js';

const CATALOG = seed([
  { id: 'V-1', name: 'Google Play', nameAr: 'جوجل بلاي', cards: [{ id: '301', amount: '0.10', stock: 1000 }, { id: '302', amount: '24.75' }] },
  { id: 'v-1', name: 'Xbox', nameAr: 'إكس بوكس', cards: [{ id: '401', amount: '15', stock: 3 }] },
]);

/** Counts every query the catalog cache makes, to prove requests are answered from memory. */
function counting(prisma: PrismaClient): { prisma: PrismaClient; count: () => number } {
  let n = 0;
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value: unknown = Reflect.get(obj, prop, receiver);
        if (typeof value === 'function') {
          return (...args: unknown[]) => {
            n++;
            return (value as (...a: unknown[]) => unknown).apply(obj, args);
          };
        }
        return value && typeof value === 'object' ? wrap(value) : value;
      },
    });
  return { prisma: wrap(prisma), count: () => n };
}

describe('catalog API', () => {
  let db: { url: string; drop: () => Promise<void> };
  let prisma: PrismaClient;
  let ctx: TestContext;
  let sandbox: SandboxWithClient;
  let cache: CatalogCache;
  let queries: () => number;
  let app: App;
  let reader: string;
  let clock = Date.now();

  beforeAll(async () => {
    db = await createIsolatedDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 4 });
    sandbox = await startSandbox({ catalog: CATALOG });
    await syncCatalog({ prisma, upstream: sandbox.client, log: (await import('../../src/platform/logger.js')).createLogger('silent') }, 'manual');
    ctx = await createTestContext();
    const counted = counting(prisma);
    queries = counted.count;
    cache = createCatalogCache({ prisma: counted.prisma, log: ctx.log, staleAfterMs: 60_000, now: () => clock });
    await cache.reload();
    app = await ctx.app({ catalog: cache });
    reader = await ctx.key(['catalog:read']);
  });
  afterAll(async () => {
    await ctx.close();
    await sandbox.close();
    await prisma.$disconnect();
    await db.drop();
  });

  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${reader}`, ...headers } });

  it('lists vendors with English and Arabic names, when they were synced, and that they are fresh', async () => {
    const res = await get('/v1/catalog/vendors');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data).toEqual([
      { vendorId: 'V-1', name: { en: 'Google Play', ar: 'جوجل بلاي' }, active: true },
      { vendorId: 'v-1', name: { en: 'Xbox', ar: 'إكس بوكس' }, active: true },
    ]);
    expect(new Date(body.syncedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(body.stale).toBe(false);
  });

  it("lists a vendor's denominations with prices exactly as the provider sent them", async () => {
    const res = await get('/v1/catalog/vendors/V-1/denominations');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      { cardId: '301', vendorId: 'V-1', name: { en: 'Card 301', ar: 'بطاقة 301' }, unitPrice: '0.10', stock: 1000, active: true },
      { cardId: '302', vendorId: 'V-1', name: { en: 'Card 302', ar: 'بطاقة 302' }, unitPrice: '24.75', stock: 10, active: true },
    ]);
    const other = await get('/v1/catalog/vendors/v-1/denominations');
    expect(other.json().data.map((d: { cardId: string; unitPrice: string }) => [d.cardId, d.unitPrice])).toEqual([['401', '15']]);
  });

  it('answers one denomination', async () => {
    const res = await get('/v1/catalog/denominations/401');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ data: { cardId: '401', vendorId: 'v-1', unitPrice: '15', stock: 3 }, stale: false });
  });

  it('answers 304 to a current If-None-Match, and 200 with a new ETag after the catalog changes', async () => {
    const first = await get('/v1/catalog/vendors/V-1/denominations');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await get('/v1/catalog/vendors/V-1/denominations', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect((await get('/v1/catalog/vendors/V-1/denominations', { 'if-none-match': `W/${etag}, "other"` })).statusCode).toBe(304);

    sandbox.sandbox.control.setStock('302', 4);
    await syncCatalog({ prisma, upstream: sandbox.client, log: ctx.log }, 'manual');
    await cache.reload();
    const changed = await get('/v1/catalog/vendors/V-1/denominations', { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.json().data[1].stock).toBe(4);
  });

  it('answers from memory: no database query per request', async () => {
    await get('/v1/catalog/vendors');
    const before = queries();
    for (let i = 0; i < 20; i++) {
      expect((await get('/v1/catalog/vendors/V-1/denominations')).statusCode).toBe(200);
      expect((await get('/v1/catalog/denominations/301')).statusCode).toBe(200);
    }
    expect(queries()).toBe(before);
  });

  it('answers unknown or other-case identifiers with 404 problem details', async () => {
    const vendor = await get('/v1/catalog/vendors/v-2/denominations');
    expect(vendor.statusCode).toBe(404);
    expect(vendor.json()).toMatchObject({ code: 'vendor_not_found', vendorId: 'v-2' });
    const card = await get('/v1/catalog/denominations/PSN-50');
    expect(card.statusCode).toBe(404);
    expect(card.json()).toMatchObject({ code: 'card_not_found', cardId: 'PSN-50' });
  });

  it('answers identifiers no catalog entry can have (NUL) with 404, not an error', async () => {
    // The catalog routes skip the storable-input guard (nothing reaches the database); such an
    // identifier is simply not found, and its problem body is still valid JSON. (A lone surrogate
    // cannot arrive in a path: its UTF-8 form is refused by the router with 400.)
    for (const id of ['%00', 'a%00b']) {
      const res = await get(`/v1/catalog/vendors/${id}/denominations`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'vendor_not_found' });
    }
    expect((await get('/v1/catalog/denominations/%00')).statusCode).toBe(404);
  });

  it('needs a key with catalog:read', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/catalog/vendors' })).statusCode).toBe(401);
    const writer = await ctx.key(['orders:write']);
    const res = await app.inject({ method: 'GET', url: '/v1/catalog/vendors', headers: { authorization: `Bearer ${writer}` } });
    expect(res.statusCode).toBe(403);
  });

  it('rejects unknown query parameters with 400', async () => {
    const res = await get('/v1/catalog/vendors?active=yes');
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
  });

  it('says stale once the last sync is older than the limit, and changes the ETag with it', async () => {
    const fresh = await get('/v1/catalog/vendors');
    clock += 120_000;
    try {
      const stale = await get('/v1/catalog/vendors', { 'if-none-match': fresh.headers.etag as string });
      expect(stale.statusCode).toBe(200);
      expect(stale.json().stale).toBe(true);
    } finally {
      clock -= 120_000;
    }
  });

  it('keeps what the provider dropped out of the lists, unless asked, and still answers it by id', async () => {
    const smaller = await startSandbox({ catalog: seed([{ id: 'V-1', name: 'Google Play', nameAr: 'جوجل بلاي', cards: [{ id: '301', amount: '0.10', stock: 1000 }] }]) });
    try {
      await syncCatalog({ prisma, upstream: smaller.client, log: ctx.log }, 'manual');
      await cache.reload();
      expect((await get('/v1/catalog/vendors')).json().data.map((v: { vendorId: string }) => v.vendorId)).toEqual(['V-1']);
      const all = (await get('/v1/catalog/vendors?includeInactive=true')).json().data;
      expect(all).toContainEqual({ vendorId: 'v-1', name: { en: 'Xbox', ar: 'إكس بوكس' }, active: false });
      expect((await get('/v1/catalog/vendors/V-1/denominations')).json().data.map((d: { cardId: string }) => d.cardId)).toEqual(['301']);
      expect((await get('/v1/catalog/denominations/302')).json().data).toMatchObject({ cardId: '302', active: false });
    } finally {
      await smaller.close();
    }
  });

  it('keeps serving the previous catalog when a sync fails', async () => {
    const before = (await get('/v1/catalog/vendors?includeInactive=true')).body;
    sandbox.sandbox.control.setFaults({ failNext: { 'get-card-list': 10 } });
    const summary = await syncCatalog({ prisma, upstream: sandbox.client, log: ctx.log }, 'manual');
    expect(summary.outcome).toBe('failed');
    await cache.reload();
    expect((await get('/v1/catalog/vendors?includeInactive=true')).body).toBe(before);
  });
});
