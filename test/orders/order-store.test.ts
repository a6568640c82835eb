import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderStore, LeaseLostError, type OrderRow } from '../../src/orders/order-store.js';
import { createPrisma } from '../../src/platform/db.js';
import type { UpstreamCallRecord } from '../../src/upstream/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const call = (endpoint: UpstreamCallRecord['endpoint'], ok: boolean): UpstreamCallRecord => ({
  endpoint,
  attempt: 1,
  ok,
  upstreamCode: ok ? 0 : 10001,
  httpStatus: 200,
  durationMs: 7,
  errorKind: ok ? undefined : 'provider',
});

/**
 * The order store's raw single-statement commit against PostgreSQL: it must answer exactly what
 * Prisma's typed API reads back, write its timeline in order, and write nothing when the
 * compare-and-set fails.
 */
describe('order store', () => {
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    await gw.worker.close(); // the store is driven by hand here
    key = await gw.key(['orders:write', 'orders:read']);
  }, 60_000);
  afterAll(() => gw.close());

  async function newOrder(quantity = 2): Promise<string> {
    const res = await gw.order(key, { cardId: '301', quantity });
    expect(res.status).toBe(202);
    return res.body.id as string;
  }

  const typed = (id: string) => gw.ctx.prisma.order.findUniqueOrThrow({ where: { id } });

  it('answers the row exactly as Prisma reads it, after acquire and after each commit', async () => {
    const id = await newOrder();
    const store = createOrderStore(gw.ctx.prisma, 'store-test', 30_000);
    const acquired = (await store.acquire(id))!;
    expect(acquired).toEqual(await typed(id));
    expect(acquired.leaseOwner).toBe('store-test');

    let order: OrderRow = await store.commit(acquired, {
      version: acquired.version,
      status: 'reserving',
      statusDetail: null,
      counters: { balanceChecks: 1, initiateAttempts: 1 },
      calls: [call('getBalance', false), call('getBalance', true)],
    });
    expect(order).toEqual(await typed(id));
    expect(order).toMatchObject({ status: 'reserving', version: acquired.version + 1, balanceChecks: 1, initiateAttempts: 1, confirmAttempts: 0 });

    order = await store.commit(order, { version: order.version, status: 'reserved', transactionId: `TXN-${id}` });
    order = await store.commit(order, { version: order.version, statusDetail: 'confirm_retry', note: 'a note' });
    expect(order).toMatchObject({ status: 'reserved', statusDetail: 'confirm_retry', transactionId: `TXN-${id}` });
    order = await store.commit(order, {
      version: order.version,
      status: 'fulfilled',
      statusDetail: null,
      calls: [call('confirmOrder', true)],
      cards: [0, 1].map((position) => ({ position, keyId: 'k1', nonce: new Uint8Array(24).fill(position + 1), ciphertext: new Uint8Array([9, 8, position]), cardNumber: `SN-${position}` })),
    });
    expect(order).toEqual(await typed(id));
    expect(order.fulfilledAt).toBeInstanceOf(Date);
    expect(order.statusDetail).toBeNull();
    expect(order.transactionId).toBe(`TXN-${id}`); // kept when a commit does not name it

    const cards = await gw.ctx.prisma.orderCard.findMany({ where: { orderId: id }, orderBy: { position: 'asc' } });
    expect(cards.map((c) => [c.position, c.keyId, [...c.nonce], [...c.ciphertext], c.cardNumber])).toEqual([
      [0, 'k1', Array(24).fill(1), [9, 8, 0], 'SN-0'],
      [1, 'k1', Array(24).fill(2), [9, 8, 1], 'SN-1'],
    ]);
    const events = await gw.ctx.prisma.orderEvent.findMany({ where: { orderId: id }, orderBy: { id: 'asc' } });
    expect(events.map((e) => [e.kind, e.endpoint ?? e.toStatus ?? null, e.ok])).toEqual([
      ['status', 'queued', null],
      ['provider_call', 'getBalance', false],
      ['provider_call', 'getBalance', true],
      ['status', 'reserving', null],
      ['status', 'reserved', null],
      ['note', null, null],
      ['provider_call', 'confirmOrder', true],
      ['status', 'fulfilled', null],
    ]);
    expect(events[1]).toMatchObject({ upstreamCode: 10001, durationMs: 7, detail: { attempt: 1, httpStatus: 200, errorKind: 'provider' } });
    expect(events[3]).toMatchObject({ fromStatus: 'queued', toStatus: 'reserving' });
    expect(events[4]!.detail).toEqual({ transactionId: `TXN-${id}` });
    expect(events[5]!.detail).toEqual({ note: 'a note' });
  });

  it('keeps leases and timestamps right when the database is set to another time zone', async () => {
    // Every connection createPrisma opens is in UTC; without that, the pg adapter's offset-less
    // timestamps and server-side now() disagree by the zone's offset (a live lease could be
    // taken over in UTC+9, an expired one held for hours in UTC-5).
    const url = gw.ctx.config.databaseUrl;
    const dbName = new URL(url).pathname.slice(1);
    await gw.ctx.prisma.$executeRawUnsafe(`ALTER DATABASE "${dbName}" SET timezone = 'Asia/Tokyo'`);
    const prisma = createPrisma({ url, poolMax: 2 });
    try {
      expect(await prisma.$queryRaw<{ TimeZone: string }[]>`SHOW TimeZone`).toEqual([{ TimeZone: 'UTC' }]);
      const id = await newOrder(1);
      const a = createOrderStore(prisma, 'tz-a', 30_000);
      const b = createOrderStore(prisma, 'tz-b', 30_000);
      const held = (await a.acquire(id))!;
      expect(await b.acquire(id)).toBeUndefined(); // a 30 s lease is live, in any zone
      const before = Date.now();
      const fulfilled = await a.commit(held, { version: held.version, status: 'fulfilled' });
      for (const at of [fulfilled.updatedAt, fulfilled.fulfilledAt!, fulfilled.createdAt]) expect(Math.abs(at.getTime() - before)).toBeLessThan(10_000);
      const events = await prisma.orderEvent.findMany({ where: { orderId: id } });
      for (const e of events) expect(Math.abs(e.at.getTime() - before)).toBeLessThan(10_000);
    } finally {
      await prisma.$disconnect();
      await gw.ctx.prisma.$executeRawUnsafe(`ALTER DATABASE "${dbName}" RESET timezone`);
    }
  });

  it('records a failure and writes nothing when the version moved or the lease is elsewhere', async () => {
    const id = await newOrder(1);
    const mine = createOrderStore(gw.ctx.prisma, 'store-a', 30_000);
    const theirs = createOrderStore(gw.ctx.prisma, 'store-b', 30_000);
    const order = (await mine.acquire(id))!;
    expect(await theirs.acquire(id)).toBeUndefined(); // a live lease is not taken over
    const before = await gw.ctx.prisma.orderEvent.count({ where: { orderId: id } });

    const stale = { version: order.version - 1, status: 'fulfilled' as const, calls: [call('confirmOrder', true)] };
    await expect(mine.commit(order, { ...stale, cards: [{ position: 0, keyId: 'k', nonce: new Uint8Array(24), ciphertext: new Uint8Array(3), cardNumber: 'x' }] })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(theirs.commit(order, { version: order.version, status: 'reserving' })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await gw.ctx.prisma.orderEvent.count({ where: { orderId: id } })).toBe(before);
    expect(await gw.ctx.prisma.orderCard.count({ where: { orderId: id } })).toBe(0);
    expect(await typed(id)).toEqual(order);

    const failed = await mine.commit(order, {
      version: order.version,
      status: 'failed',
      statusDetail: 'out_of_stock',
      failure: { code: 'out_of_stock', message: 'No stock', upstreamCode: 10005 },
    });
    expect(failed).toMatchObject({ status: 'failed', failureCode: 'out_of_stock', failureMessage: 'No stock', failureUpstreamCode: 10005, fulfilledAt: null });
    await mine.release(id);
    expect(await typed(id)).toMatchObject({ leaseOwner: null, leaseUntil: null });
    expect((await theirs.acquire(id))?.leaseOwner).toBe('store-b');
  });
});
