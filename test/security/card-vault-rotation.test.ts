import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPrisma, type PrismaClient } from '../../src/platform/db.js';
import { createCardVault, rotateCardCodes, type CardVault, type RotationProgress } from '../../src/security/card-vault.js';
import { createIsolatedDatabase } from '../helpers/database.js';
import { clearCards, createOrder, key, storeCards, type StoredCard } from './fixtures.js';

const k0 = key('k0');
const k1 = key('k1');
const k2 = key('k2');

describe('card-code key rotation', () => {
  let db: { url: string; drop: () => Promise<void> };
  let prisma: PrismaClient;
  let underK1: CardVault;
  let ring: CardVault; // [k2, k1]

  beforeAll(async () => {
    db = await createIsolatedDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 4 });
    underK1 = await createCardVault([k1]);
    ring = await createCardVault([k2, k1]);
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });
  beforeEach(async () => {
    await clearCards(prisma);
  });

  const rowsUnder = (keyId: string) => prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM order_cards WHERE key_id = ${keyId}`.then((r) => r[0]!.n);

  async function expectAllDecrypt(vault: CardVault, cards: StoredCard[]): Promise<void> {
    const rows = await prisma.orderCard.findMany({ where: { orderId: { in: [...new Set(cards.map((c) => c.orderId))] } } });
    const byPlace = new Map(rows.map((r) => [`${r.orderId}/${r.position}`, r]));
    for (const c of cards) {
      const row = byPlace.get(`${c.orderId}/${c.position}`)!;
      expect(vault.decrypt(row)).toBe(c.code);
    }
  }

  it('re-encrypts every row under the current key, in batches, keeping every code', async () => {
    const cards = await storeCards(prisma, underK1, 25, 2); // 50 rows under k1
    const progress: RotationProgress[] = [];
    const result = await rotateCardCodes({ prisma, vault: ring, batchSize: 15, onProgress: (p) => progress.push(p) });

    expect(result).toEqual({ keyId: 'k2', rotated: 50, alreadyCurrent: 0, failed: [] });
    expect(progress.map((p) => p.seen)).toEqual([15, 30, 45, 50]);
    expect(progress.at(-1)).toEqual({ batch: 4, seen: 50, rotated: 50, failed: 0 });
    expect(await rowsUnder('k1')).toBe(0);
    expect(await rowsUnder('k2')).toBe(50);
    await expectAllDecrypt(ring, cards);
    // k1 is no longer needed: a vault holding only k2 reads every code.
    await expectAllDecrypt(await createCardVault([k2]), cards);
  });

  it('is a no-op the second time', async () => {
    const cards = await storeCards(prisma, underK1, 5, 2);
    expect(await rotateCardCodes({ prisma, vault: ring })).toMatchObject({ rotated: 10, alreadyCurrent: 0, failed: [] });
    const before = await prisma.orderCard.findMany({ orderBy: [{ orderId: 'asc' }, { position: 'asc' }] });

    const progress: RotationProgress[] = [];
    expect(await rotateCardCodes({ prisma, vault: ring, onProgress: (p) => progress.push(p) })).toEqual({ keyId: 'k2', rotated: 0, alreadyCurrent: 10, failed: [] });
    expect(progress).toEqual([]);
    const after = await prisma.orderCard.findMany({ orderBy: [{ orderId: 'asc' }, { position: 'asc' }] });
    expect(after).toEqual(before); // same nonces and ciphertexts: nothing was rewritten
    await expectAllDecrypt(ring, cards);
  });

  it('counts rows already under the current key and leaves them untouched', async () => {
    await storeCards(prisma, ring, 3, 1); // already under k2
    const current = await prisma.orderCard.findMany({ orderBy: { orderId: 'asc' } });
    const old = await storeCards(prisma, underK1, 2, 2);
    expect(await rotateCardCodes({ prisma, vault: ring })).toEqual({ keyId: 'k2', rotated: 4, alreadyCurrent: 3, failed: [] });
    const stillCurrent = await prisma.orderCard.findMany({ where: { orderId: { in: current.map((c) => c.orderId) } }, orderBy: { orderId: 'asc' } });
    expect(stillCurrent).toEqual(current);
    await expectAllDecrypt(ring, old);
  });

  it('reports rows under a key missing from the ring, and rows that do not authenticate, as failed', async () => {
    const good = await storeCards(prisma, underK1, 3, 2);
    const [lost] = await storeCards(prisma, await createCardVault([k0]), 1, 1);
    // A row whose ciphertext was damaged (or moved here from another order).
    const damagedOrder = await createOrder(prisma);
    const sealed = underK1.encrypt({ orderId: damagedOrder, position: 0, code: 'WILL-NOT-SURVIVE' });
    sealed.ciphertext[0]! ^= 0xff;
    await prisma.orderCard.create({ data: { orderId: damagedOrder, position: 0, ...sealed, cardNumber: 'SN-DMG' } });

    const result = await rotateCardCodes({ prisma, vault: ring, batchSize: 2 });
    expect(result.rotated).toBe(6);
    expect(result.failed).toHaveLength(2);
    expect(result.failed).toEqual(
      expect.arrayContaining([
        { orderId: lost!.orderId, position: 0, keyId: 'k0', code: 'unknown_key' },
        { orderId: damagedOrder, position: 0, keyId: 'k1', code: 'decrypt_failed' },
      ]),
    );
    // Failed rows are left exactly as they were; the rest moved to k2.
    expect(await rowsUnder('k0')).toBe(1);
    expect(await rowsUnder('k1')).toBe(1);
    await expectAllDecrypt(ring, good);
    await expectAllDecrypt(await createCardVault([k0]), [lost!]);

    // Reported again on the next run (never silently skipped), with nothing else to do.
    const again = await rotateCardCodes({ prisma, vault: ring });
    expect(again.rotated).toBe(0);
    expect(again.failed.map((f) => f.code).sort()).toEqual(['decrypt_failed', 'unknown_key']);
  });

  it('two concurrent rotations split the rows: each row is rotated exactly once, same end state', async () => {
    const cards = await storeCards(prisma, underK1, 150, 2); // 300 rows
    const other = createPrisma({ url: db.url, poolMax: 2 });
    try {
      await Promise.all([prisma.$queryRaw`SELECT 1`, other.$queryRaw`SELECT 1`]); // both warm, so they really overlap

      // Count every encryption, per row, across both runners.
      const sealedPlaces: string[] = [];
      const counting = (v: CardVault): CardVault => ({
        ...v,
        encrypt: (input) => {
          sealedPlaces.push(`${input.orderId}/${input.position}`);
          return v.encrypt(input);
        },
      });
      const seen = [0, 0];
      const [a, b] = await Promise.all([
        rotateCardCodes({ prisma, vault: counting(ring), batchSize: 10, onProgress: (p) => (seen[0] = p.seen) }),
        rotateCardCodes({ prisma: other, vault: counting(ring), batchSize: 10, onProgress: (p) => (seen[1] = p.seen) }),
      ]);

      expect(a.failed).toEqual([]);
      expect(b.failed).toEqual([]);
      expect(a.rotated + b.rotated).toBe(300);
      expect(a.rotated).toBeGreaterThan(0); // both really took part
      expect(b.rotated).toBeGreaterThan(0);
      expect(seen[0]! + seen[1]!).toBe(300); // no row was even examined twice
      expect(sealedPlaces).toHaveLength(300);
      expect(new Set(sealedPlaces).size).toBe(300);
      expect(await rowsUnder('k1')).toBe(0);
      expect(await rowsUnder('k2')).toBe(300);
      await expectAllDecrypt(ring, cards);
    } finally {
      await other.$disconnect();
    }
  });
});
