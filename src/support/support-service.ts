import { AppError } from '../errors.js';
import type { OrderStatus } from '../orders/order-state.js';
import type { OrderRow } from '../orders/order-store.js';
import type { CardDecrypter } from '../orders/order-view.js';
import type { Prisma, PrismaClient } from '../platform/db.js';
import { appendAudit, type AuditInput } from './audit-log.js';
import { salesReport } from './sales-report.js';
import { QUEUE_NAMES, type QueueRegistry } from '../platform/queues.js';

export interface SearchQuery {
  /** Matched exactly against order id, transaction id, transaction number (current or earlier) and reference. */
  q?: string | undefined;
  status?: OrderStatus | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  limit: number;
  /** The id of the last order of the previous page (orders come newest first). */
  cursor?: string | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The exact-match conditions for a support search term. */
export function searchConditions(q: string): Prisma.OrderWhereInput[] {
  const term = q.trim();
  const or: Prisma.OrderWhereInput[] = [{ transactionId: term }, { reference: term }];
  if (UUID.test(term)) or.push({ id: term.toLowerCase() });
  if (/^\d{1,18}$/.test(term)) {
    or.push({ transactionNumber: BigInt(term) }, { previousTransactionNumbers: { has: BigInt(term) } });
  }
  return or;
}

export interface Actor {
  keyId: string | null;
  name: string;
  ip: string | null;
}

export function createSupportService({ prisma, vault, queues }: { prisma: PrismaClient; vault: CardDecrypter; queues: QueueRegistry }) {
  return {
    async search(query: SearchQuery): Promise<{ orders: (OrderRow & { storefront: string | null })[]; nextCursor: string | null }> {
      const where: Prisma.OrderWhereInput = {
        ...(query.q ? { OR: searchConditions(query.q) } : {}),
        ...(query.status ? { status: query.status } : {}),
        ...(query.from || query.to ? { createdAt: { ...(query.from ? { gte: query.from } : {}), ...(query.to ? { lt: query.to } : {}) } } : {}),
      };
      const rows = await prisma.order.findMany({
        where,
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: query.limit + 1,
        ...(query.cursor ? { cursor: { id: query.cursor }, skip: 1 } : {}),
      });
      const page = rows.slice(0, query.limit);
      const names = await keyNames(prisma, page.map((o) => o.apiKeyId));
      return {
        orders: page.map((o) => ({ ...o, storefront: names.get(o.apiKeyId) ?? null })),
        nextCursor: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null,
      };
    },

    /** Everything support needs about one order, never its codes. */
    async detail(orderId: string) {
      const order = await prisma.order.findUnique({ where: { id: orderId } });
      if (!order) throw new AppError('order_not_found', 'No such order.', { details: { orderId } });
      const [events, cardsStored, callbacks, webhooks, names, denomination] = await Promise.all([
        prisma.orderEvent.findMany({ where: { orderId }, orderBy: { id: 'asc' }, take: 1_000 }),
        prisma.orderCard.count({ where: { orderId } }),
        prisma.callbackDelivery.findMany({ where: { orderId }, orderBy: { createdAt: 'asc' }, select: { event: true, status: true, attempts: true, lastStatus: true, deliveredAt: true } }),
        prisma.webhookEvent.findMany({ where: { orderId }, orderBy: { receivedAt: 'asc' }, select: { id: true, type: true, status: true, receivedAt: true } }),
        keyNames(prisma, [order.apiKeyId]),
        prisma.denomination.findUnique({ where: { id: order.cardId }, select: { nameEn: true, nameAr: true, vendor: { select: { id: true, nameEn: true, nameAr: true } } } }),
      ]);
      return { order, storefront: names.get(order.apiKeyId) ?? null, events, cardsStored, callbacks, webhooks, denomination };
    },

    /**
     * The codes of an order, for a person with support:reveal. The reveal is written to the audit
     * log first: if that fails, nothing is revealed.
     */
    async reveal(orderId: string, actor: Actor, reason: string | undefined): Promise<{ cards: { code: string; number: string }[]; auditId: bigint }> {
      const order = await prisma.order.findUnique({ where: { id: orderId }, select: { id: true, status: true } });
      if (!order) throw new AppError('order_not_found', 'No such order.', { details: { orderId } });
      const rows = await prisma.orderCard.findMany({ where: { orderId }, orderBy: { position: 'asc' } });
      if (rows.length === 0) throw new AppError('not_found', 'This order holds no cards to reveal.', { details: { orderId, orderStatus: order.status } });
      const audit = await appendAudit(prisma, {
        actorKeyId: actor.keyId,
        actorName: actor.name,
        action: 'reveal',
        orderId,
        sourceIp: actor.ip,
        detail: { cards: rows.length, reason: reason ?? null },
      });
      const cards = rows.map((c) => ({ code: vault.decrypt({ orderId, position: c.position, keyId: c.keyId, nonce: c.nonce, ciphertext: c.ciphertext }), number: c.cardNumber }));
      return { cards, auditId: audit.id };
    },

    /** Job counts per queue, for the console's queue health. */
    async queueHealth() {
      return Promise.all(
        QUEUE_NAMES.map(async (name) => {
          const c = await queues.get(name).getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
          return { name, waiting: (c.waiting ?? 0) + (c.prioritized ?? 0), active: c.active ?? 0, delayed: c.delayed ?? 0, failed: c.failed ?? 0 };
        }),
      );
    },

    salesReport(opts: Parameters<typeof salesReport>[1]) {
      return salesReport(prisma, opts);
    },

    audit(input: AuditInput) {
      return appendAudit(prisma, input);
    },

    async auditEntries(query: { from?: Date | undefined; to?: Date | undefined; orderId?: string | undefined; limit: number }) {
      return prisma.auditEntry.findMany({
        where: {
          ...(query.orderId ? { orderId: query.orderId } : {}),
          ...(query.from || query.to ? { at: { ...(query.from ? { gte: query.from } : {}), ...(query.to ? { lt: query.to } : {}) } } : {}),
        },
        orderBy: { id: 'desc' },
        take: query.limit,
      });
    },
  };
}

export type SupportService = ReturnType<typeof createSupportService>;

async function keyNames(prisma: PrismaClient, ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const keys = await prisma.apiKey.findMany({ where: { id: { in: unique } }, select: { id: true, name: true } });
  return new Map(keys.map((k) => [k.id, k.name]));
}
