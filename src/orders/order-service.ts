import { createHash, randomUUID } from 'node:crypto';
import type { CatalogCache } from '../catalog/catalog-cache.js';
import { AppError } from '../errors.js';
import type { PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { QueueRegistry } from '../platform/queues.js';
import { orderTotal, sameAmount } from './money.js';
import { enqueueOrder } from './order-jobs.js';
import { ORDER_COLUMNS, type OrderRow } from './order-store.js';

export interface NewOrderRequest {
  cardId: string;
  quantity: number;
  reference?: string | undefined;
  expectedUnitPrice?: string | undefined;
  callbackUrl?: string | undefined;
}

/** A stored card: its code still encrypted (see CardDecrypter). */
export interface StoredCard {
  orderId: string;
  position: number;
  keyId: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
  cardNumber: string;
}

export interface OrderWithCards {
  order: OrderRow;
  cards: StoredCard[];
}

/** A card as getWithCards' JSON carries it (bytes in base64). */
interface RawCard {
  position: number;
  keyId: string;
  nonce: string;
  ciphertext: string;
  cardNumber: string;
}

export interface CreateResult {
  order: OrderRow;
  /** True when this idempotency key had already created the order. */
  replayed: boolean;
}

/**
 * The request's fingerprint for idempotency: every field, absent ones as null, in a fixed
 * order, so the same request always hashes the same and any difference is caught.
 */
export function requestHash(request: NewOrderRequest): string {
  const canonical = JSON.stringify([
    request.cardId,
    request.quantity,
    request.reference ?? null,
    request.expectedUnitPrice ?? null,
    request.callbackUrl ?? null,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

export interface OrderServiceDeps {
  prisma: PrismaClient;
  catalog: CatalogCache;
  queues: QueueRegistry;
  log: Logger;
}

export function createOrderService({ prisma, catalog, queues, log }: OrderServiceDeps) {
  async function replayOrReject(apiKeyId: string, idempotencyKey: string, hash: string): Promise<OrderRow | undefined> {
    const existing = await prisma.order.findUnique({ where: { apiKeyId_idempotencyKey: { apiKeyId, idempotencyKey } } });
    if (!existing) return undefined;
    if (existing.requestHash !== hash) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request body; use a new key for a new order.', {
        details: { orderId: existing.id },
      });
    }
    return existing;
  }

  /** What `request` buys (its unit price), or the AppError refusing it: unknown card, inactive, price moved. */
  function acceptable(request: NewOrderRequest): { unitPrice: string } {
    const denomination = catalog.snapshot.denominationById.get(request.cardId);
    if (!denomination) {
      throw new AppError('card_not_found', `No denomination with cardId ${JSON.stringify(request.cardId)} (identifiers are case-sensitive).`, {
        details: { cardId: request.cardId },
      });
    }
    if (!denomination.active) {
      throw new AppError('card_unavailable', 'The provider no longer offers this denomination.', { details: { cardId: request.cardId } });
    }
    if (request.expectedUnitPrice !== undefined && !sameAmount(request.expectedUnitPrice, denomination.unitPrice)) {
      throw new AppError('price_changed', `The unit price is now ${denomination.unitPrice}, not ${request.expectedUnitPrice}.`, {
        details: { cardId: request.cardId, currentUnitPrice: denomination.unitPrice, expectedUnitPrice: request.expectedUnitPrice },
      });
    }
    return denomination;
  }

  return {
    /**
     * Accepts an order once per (API key, Idempotency-Key). The key is claimed by the unique
     * index in PostgreSQL: of concurrent requests with one key, exactly one inserts; the others
     * read its row and replay it (same body) or get 422 (other body).
     */
    async create(apiKeyId: string, idempotencyKey: string, request: NewOrderRequest): Promise<CreateResult> {
      const hash = requestHash(request);
      // The catalog checks come first (memory only); the key is looked up only when one of them
      // refuses or the insert finds the key taken. A new order costs one statement, and a replay
      // still replays when its card has since left the catalog or changed price.
      let denomination: { unitPrice: string };
      try {
        denomination = acceptable(request);
      } catch (refusal) {
        const earlier = await replayOrReject(apiKeyId, idempotencyKey, hash);
        if (earlier) return { order: earlier, replayed: true };
        throw refusal;
      }

      // One statement claims the key and writes the order with its first timeline entry: the
      // unique (api_key_id, idempotency_key) index decides between concurrent requests; the
      // losers insert nothing (ON CONFLICT DO NOTHING waits for the winner's commit), then read
      // its row and replay it (same body) or get 422 (other body).
      const id = randomUUID();
      // This process's clock, as Prisma's @default(now()) / @updatedAt writes elsewhere.
      const now = new Date();
      const [created] = await prisma.$queryRaw<OrderRow[]>`
        WITH created AS (
          INSERT INTO orders (id, api_key_id, idempotency_key, request_hash, card_id, quantity, unit_price, total_amount, reference, callback_url, payment_id, created_at, updated_at)
          SELECT ${id}::uuid, ${apiKeyId}::uuid, ${idempotencyKey}, ${hash}, ${request.cardId}, ${request.quantity}::int, ${denomination.unitPrice},
                 ${orderTotal(denomination.unitPrice, request.quantity)}::numeric, ${request.reference ?? null}::text, ${request.callbackUrl ?? null}::text,
                 ${`gw-${id}` /* the payment reference sent with confirm-order: stable across retries */}, ${now}, ${now}
          -- A key already used is not inserted at all, so a replay does not even draw a
          -- transaction_number; ON CONFLICT settles the race of two first uses.
          WHERE NOT EXISTS (SELECT 1 FROM orders WHERE api_key_id = ${apiKeyId}::uuid AND idempotency_key = ${idempotencyKey})
          ON CONFLICT (api_key_id, idempotency_key) DO NOTHING
          RETURNING *
        ),
        accepted AS (
          INSERT INTO order_events (order_id, kind, to_status, detail)
          SELECT created.id, 'status', 'queued', ${JSON.stringify({ detail: 'accepted' })}::jsonb FROM created
        )
        SELECT ${ORDER_COLUMNS} FROM created`;
      if (!created) {
        const winner = await replayOrReject(apiKeyId, idempotencyKey, hash);
        // Only possible if the winning row was deleted in between, which nothing does.
        if (!winner) throw new Error('the idempotency key was claimed, but its order cannot be read');
        return { order: winner, replayed: true };
      }
      const order = created;
      await this.enqueue(order.id, 0, true);
      return { order, replayed: false };
    },

    /** Queues the order's pipeline job. A failure here loses nothing: the reconciler re-queues it. */
    async enqueue(orderId: string, delayMs = 0, fresh = false): Promise<boolean> {
      try {
        return await enqueueOrder(queues, orderId, delayMs, fresh);
      } catch (err) {
        log.warn({ orderId, err: { message: (err as Error).message } }, 'could not queue the order now; the reconciler will');
        return false;
      }
    },

    async findByReference(reference: string, viewer: { apiKeyId: string; seeAll: boolean }, limit = 100): Promise<OrderRow[]> {
      return prisma.order.findMany({
        where: { reference, ...(viewer.seeAll ? {} : { apiKeyId: viewer.apiKeyId }) },
        orderBy: { createdAt: 'desc' },
        take: limit,
      });
    },

    async cardsOf(orderId: string): Promise<StoredCard[]> {
      return prisma.orderCard.findMany({ where: { orderId }, orderBy: { position: 'asc' }, select: { orderId: true, position: true, keyId: true, nonce: true, ciphertext: true, cardNumber: true } });
    },

    /**
     * The order if the viewer may see it (its creator, or any key when `seeAll`), with its
     * stored (encrypted) cards, read in ONE statement, so the two are
     * consistent (cards are written in the same statement that makes an order fulfilled) and a
     * waiting request's answer costs one round trip. Undefined when missing or not the viewer's.
     */
    async getWithCards(id: string, viewer: { apiKeyId: string; seeAll: boolean }): Promise<OrderWithCards | undefined> {
      const [row] = await prisma.$queryRaw<(OrderRow & { storedCards: RawCard[] })[]>`
        SELECT ${ORDER_COLUMNS},
               COALESCE((SELECT json_agg(json_build_object('position', c.position, 'keyId', c.key_id, 'nonce', encode(c.nonce, 'base64'),
                                                           'ciphertext', encode(c.ciphertext, 'base64'), 'cardNumber', c.card_number) ORDER BY c.position)
                         FROM order_cards c WHERE c.order_id = orders.id), '[]'::json) AS "storedCards"
        FROM orders WHERE id = ${id}::uuid`;
      if (!row || (!viewer.seeAll && row.apiKeyId !== viewer.apiKeyId)) return undefined;
      const { storedCards, ...order } = row;
      const cards = storedCards.map((c) => ({
        orderId: order.id,
        position: c.position,
        keyId: c.keyId,
        nonce: Buffer.from(c.nonce, 'base64'),
        ciphertext: Buffer.from(c.ciphertext, 'base64'),
        cardNumber: c.cardNumber,
      }));
      return { order, cards };
    },
  };
}

export type OrderService = ReturnType<typeof createOrderService>;
