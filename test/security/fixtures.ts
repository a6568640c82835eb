import { randomBytes, randomUUID } from 'node:crypto';
import type { CardCodeKey } from '../../src/config/env.js';
import type { PrismaClient } from '../../src/platform/db.js';
import type { CardVault } from '../../src/security/card-vault.js';
import { codeFromPattern } from '../../src/sandbox/card-codes.js';

export const key = (id: string): CardCodeKey => ({ id, key: new Uint8Array(randomBytes(32)) });

/** CARD_CODE_KEYS syntax for these keys, first = current. */
export const keysEnv = (keys: CardCodeKey[]): string => keys.map((k) => `${k.id}:${Buffer.from(k.key).toString('base64')}`).join(',');

export const cardCode = (): string => codeFromPattern('XXXX-XXXX-XXXX-XXXX');

/** The vendor and denomination orders point at (created once per database). */
export async function ensureDenomination(prisma: PrismaClient): Promise<string> {
  const now = new Date();
  await prisma.vendor.upsert({
    where: { id: 'VAULT-V' },
    create: { id: 'VAULT-V', nameEn: 'Vault vendor', nameAr: 'مورد', firstSeenAt: now, lastSeenAt: now },
    update: {},
  });
  await prisma.denomination.upsert({
    where: { id: 'VAULT-1' },
    create: { id: 'VAULT-1', vendorId: 'VAULT-V', nameEn: 'Card 5', nameAr: 'بطاقة 5', unitPrice: '5', unitPriceValue: '5', stock: 100, firstSeenAt: now, lastSeenAt: now },
    update: {},
  });
  return 'VAULT-1';
}

export async function createOrder(prisma: PrismaClient, quantity = 1): Promise<string> {
  const cardId = await ensureDenomination(prisma);
  const order = await prisma.order.create({
    data: {
      apiKeyId: randomUUID(),
      idempotencyKey: randomUUID(),
      requestHash: 'test',
      cardId,
      quantity,
      unitPrice: '5',
      totalAmount: String(5 * quantity),
      paymentId: `pay-${randomUUID()}`,
    },
  });
  return order.id;
}

export interface StoredCard {
  orderId: string;
  position: number;
  code: string;
}

/** `orders` orders of `perOrder` cards each, sealed by `vault` and stored; returns the plaintexts. */
export async function storeCards(prisma: PrismaClient, vault: CardVault, orders: number, perOrder = 2): Promise<StoredCard[]> {
  const cards: StoredCard[] = [];
  for (let o = 0; o < orders; o++) {
    const orderId = await createOrder(prisma, perOrder);
    for (let position = 0; position < perOrder; position++) cards.push({ orderId, position, code: cardCode() });
  }
  await prisma.orderCard.createMany({
    data: cards.map((c, i) => ({ orderId: c.orderId, position: c.position, ...vault.encrypt(c), cardNumber: `SN${String(i).padStart(10, '0')}` })),
  });
  return cards;
}

/** Removes every card and order, so each rotation test starts from an empty table. */
export async function clearCards(prisma: PrismaClient): Promise<void> {
  await prisma.orderCard.deleteMany();
  await prisma.order.deleteMany();
}
