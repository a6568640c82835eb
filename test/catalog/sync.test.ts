import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncCatalog } from '../../src/catalog/sync-catalog.js';
import { createPrisma, type PrismaClient } from '../../src/platform/db.js';
import { createLogger } from '../../src/platform/logger.js';
import { createIsolatedDatabase } from '../helpers/database.js';
import { seed, startSandbox, type SandboxWithClient } from '../helpers/sandbox.js';

const log = createLogger('silent');

const FIRST = seed([
  { id: 'V-1', name: 'Google Play', nameAr: 'جوجل بلاي', cards: [{ id: '301', amount: '0.10', stock: 1000 }, { id: '302', amount: '24.75' }] },
  { id: 'v-1', name: 'Xbox', cards: [{ id: '401', amount: '4.99', stock: 12 }] },
  { id: '9', cards: [{ id: '901', amount: '15' }, { id: '902', amount: '9.99' }] },
]);

// The next day: 302 costs more, 901 is "15.00" (same price, other text), 902 is gone,
// vendor v-1 is gone, 401's stock moved, a new vendor appeared.
const SECOND = seed([
  { id: 'V-1', name: 'Google Play', nameAr: 'جوجل بلاي', cards: [{ id: '301', amount: '0.10', stock: 990 }, { id: '302', amount: '25.50' }] },
  { id: '9', cards: [{ id: '901', amount: '15.00' }] },
  { id: '10', cards: [{ id: '1001', amount: '50' }] },
]);

describe('catalog sync', () => {
  let db: { url: string; drop: () => Promise<void> };
  let prisma: PrismaClient;
  const sandboxes: SandboxWithClient[] = [];
  const sandboxFor = async (catalog: ReturnType<typeof seed>) => {
    const s = await startSandbox({ catalog });
    sandboxes.push(s);
    return s;
  };

  beforeAll(async () => {
    db = await createIsolatedDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 4 });
  });
  afterAll(async () => {
    await Promise.all(sandboxes.map((s) => s.close()));
    await prisma.$disconnect();
    await db.drop();
  });

  it('stores vendors and denominations with both names, exact prices and stock, and records the run', async () => {
    const { client } = await sandboxFor(FIRST);
    const progress: string[] = [];
    const summary = await syncCatalog({ prisma, upstream: client, log, onProgress: (p) => progress.push(p.step) }, 'manual');
    expect(summary).toMatchObject({ outcome: 'succeeded', vendorsSeen: 3, denominationsSeen: 5, errors: [] });
    expect(progress.filter((p) => p === 'vendor')).toHaveLength(3);

    const vendors = await prisma.vendor.findMany({ orderBy: { id: 'asc' } });
    // Case-sensitive identifiers: V-1 and v-1 are two vendors.
    expect(vendors.map((v) => v.id)).toEqual(['9', 'V-1', 'v-1']);
    expect(vendors.find((v) => v.id === 'V-1')).toMatchObject({ nameEn: 'Google Play', nameAr: 'جوجل بلاي', active: true });

    const d301 = await prisma.denomination.findUniqueOrThrow({ where: { id: '301' } });
    expect(d301).toMatchObject({ vendorId: 'V-1', unitPrice: '0.10', stock: 1000, active: true, nameAr: 'بطاقة 301' });
    expect(d301.unitPriceValue.toString()).toBe('0.1');
    expect((await prisma.denomination.findUniqueOrThrow({ where: { id: '901' } })).unitPrice).toBe('15');

    const run = await prisma.catalogSyncRun.findUniqueOrThrow({ where: { id: summary.runId } });
    expect(run).toMatchObject({ trigger: 'manual', outcome: 'succeeded', vendorsSeen: 3, denominationsSeen: 5 });
    expect(run.finishedAt).toBeInstanceOf(Date);
  });

  it('on the next sync updates prices and stock, records real price changes, and deactivates what disappeared', async () => {
    const before = await prisma.denomination.findUniqueOrThrow({ where: { id: '902' } });
    const { client } = await sandboxFor(SECOND);
    const summary = await syncCatalog({ prisma, upstream: client, log }, 'schedule');
    expect(summary).toMatchObject({ outcome: 'succeeded', vendorsSeen: 3, priceChanges: 1, vendorsDeactivated: 1, denominationsDeactivated: 2 });

    const changes = await prisma.priceChange.findMany();
    expect(changes.map((c) => [c.denominationId, c.oldPrice, c.newPrice])).toEqual([['302', '24.75', '25.50']]);
    expect((await prisma.denomination.findUniqueOrThrow({ where: { id: '901' } })).unitPrice).toBe('15.00');
    expect((await prisma.denomination.findUniqueOrThrow({ where: { id: '301' } })).stock).toBe(990);

    // Never deleted: orders point at them.
    const gone = await prisma.denomination.findUniqueOrThrow({ where: { id: '902' } });
    expect(gone).toMatchObject({ active: false, unitPrice: '9.99' });
    expect(gone.lastSeenAt).toEqual(before.lastSeenAt);
    expect(await prisma.vendor.findUniqueOrThrow({ where: { id: 'v-1' } })).toMatchObject({ active: false });
    expect(await prisma.denomination.findUniqueOrThrow({ where: { id: '401' } })).toMatchObject({ active: false });
    expect(await prisma.vendor.findUniqueOrThrow({ where: { id: '10' } })).toMatchObject({ active: true });
  });

  it('keeps going when one vendor fails: the run is partial, says why, and keeps that vendor as it was', async () => {
    const { sandbox, client } = await sandboxFor(SECOND);
    const before301 = await prisma.denomination.findUniqueOrThrow({ where: { id: '301' } });
    sandbox.control.setStock('301', before301.stock + 5);
    sandbox.control.setStock('1001', 77);
    // The client makes 4 attempts per read; with one vendor at a time, the first vendor's
    // details call (V-1, listed first) uses up all the injected failures.
    sandbox.control.setFaults({ failNext: { 'get-card-details-list': 4 } });
    const summary = await syncCatalog({ prisma, upstream: client, log, concurrency: 1 }, 'manual');
    expect(summary.outcome).toBe('partial');
    expect(summary.errors).toEqual([expect.objectContaining({ vendorId: 'V-1', code: 'upstream_10001' })]);
    expect(await prisma.denomination.findUniqueOrThrow({ where: { id: '301' } })).toMatchObject({ stock: before301.stock, active: true });
    expect(await prisma.vendor.findUniqueOrThrow({ where: { id: 'V-1' } })).toMatchObject({ active: true });
    expect((await prisma.denomination.findUniqueOrThrow({ where: { id: '1001' } })).stock).toBe(77);
    const run = await prisma.catalogSyncRun.findUniqueOrThrow({ where: { id: summary.runId } });
    expect(run.outcome).toBe('partial');
    expect(run.errors).toEqual([expect.objectContaining({ vendorId: 'V-1', code: 'upstream_10001' })]);
  });

  it('changes nothing when the vendor list cannot be fetched: the previous catalog stays', async () => {
    const { sandbox, client } = await sandboxFor(FIRST);
    const before = await prisma.denomination.findMany({ orderBy: { id: 'asc' } });
    sandbox.control.setFaults({ failNext: { 'get-card-list': 10 } });
    const summary = await syncCatalog({ prisma, upstream: client, log }, 'schedule');
    expect(summary.outcome).toBe('failed');
    expect(summary.errors[0]).toMatchObject({ code: 'upstream_10001' });
    expect(await prisma.denomination.findMany({ orderBy: { id: 'asc' } })).toEqual(before);
  });
});
