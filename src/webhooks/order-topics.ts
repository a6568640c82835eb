import type { BusyMode } from '../orders/busy-mode.js';
import { enqueueOrder } from '../orders/order-jobs.js';
import type { OrderRow } from '../orders/order-store.js';
import type { Prisma, PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { QueueRegistry } from '../platform/queues.js';

/**
 * What the provider's webhooks do to orders and to busy mode. Three rules:
 *
 * 1. Every event that names one of our orders is written on its timeline, whatever it says.
 * 2. Events only ever move an order that needs attention, never a settled or in-flight one, so
 *    duplicates and out-of-order deliveries cannot move an order backwards; each change is a
 *    compare-and-set, so a replayed event has one effect.
 * 3. Codes always come from the provider's API, never from a webhook: an event can tell us that
 *    a transaction exists or was paid, and the pipeline then asks the provider for the codes.
 *
 * Settlements:
 * - order.created with our transaction number, for an order whose initiate outcome was unknown:
 *   now we know the transaction_id, so the order goes to `reserved` and is confirmed.
 * - status cancelled/expired (or a final update cancelled) for an order that needs attention and
 *   holds no cards: the provider holds no paid order, so it is `failed`.
 * - confirmed / final completed for an order whose confirm answer was lost: paid; one more
 *   confirm with the same transaction_id asks for the codes, and if the provider refuses, the
 *   order is back in needs_attention saying the provider reports it paid.
 * - an event naming a transaction number this order used before a support retry, or one we do
 *   not know at all, is flagged: the provider may hold a reservation no order tracks.
 */

export interface WebhookEventLike {
  id: string;
  type: string;
  occurredAt: Date | null;
  payload: Prisma.JsonValue;
}

export interface TopicResult {
  outcome: 'processed' | 'ignored';
  orderId?: string;
  note?: string;
}

export type OrderTopic = 'order_status' | 'order_created' | 'order_final' | 'busy_on' | 'busy_off';

type Data = Record<string, unknown>;

function dataOf(event: WebhookEventLike): Data {
  const payload = event.payload as { data?: unknown } | null;
  return payload && typeof payload.data === 'object' && payload.data !== null ? (payload.data as Data) : {};
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' ? String(v) : undefined);

function integerText(v: unknown): string | undefined {
  const t = text(v);
  return t !== undefined && /^\d{1,18}$/.test(t) ? t : undefined;
}

export function createOrderTopicHandlers({ prisma, queues, busy, log }: { prisma: PrismaClient; queues: QueueRegistry; busy: BusyMode; log: Logger }) {
  /** The order an event is about, and whether it names the order's current transaction. */
  async function match(data: Data): Promise<{ order: OrderRow; current: boolean } | undefined> {
    const transactionId = text(data.transaction_id);
    if (transactionId) {
      const order = await prisma.order.findUnique({ where: { transactionId } });
      if (order) return { order, current: true };
    }
    const number = integerText(data.transaction_number);
    if (!number) return undefined;
    const current = await prisma.order.findUnique({ where: { transactionNumber: BigInt(number) } });
    if (current) return { order: current, current: true };
    const previous = await prisma.order.findFirst({ where: { previousTransactionNumbers: { has: BigInt(number) } } });
    return previous ? { order: previous, current: false } : undefined;
  }

  async function record(orderId: string, event: WebhookEventLike, data: Data, note?: string): Promise<void> {
    await prisma.orderEvent.create({
      data: {
        orderId,
        kind: 'webhook',
        detail: {
          eventId: event.id,
          type: event.type,
          status: text(data.status) ?? null,
          transactionId: text(data.transaction_id) ?? null,
          transactionNumber: integerText(data.transaction_number) ?? null,
          ...(note ? { note } : {}),
        },
      },
    });
  }

  async function flag(event: WebhookEventLike, note: string): Promise<void> {
    await prisma.webhookEvent.update({ where: { id: event.id }, data: { flagged: true } }).catch(() => undefined);
    log.warn({ eventId: event.id, type: event.type, note }, 'provider webhook needs a look');
  }

  /** Moves a needs_attention order on, only if it is still exactly as read. */
  async function settle(order: OrderRow, data: Prisma.OrderUpdateManyMutationInput, event: WebhookEventLike, note: string): Promise<boolean> {
    const { count } = await prisma.order.updateMany({
      where: { id: order.id, version: order.version, status: 'needs_attention' },
      data: { ...data, version: { increment: 1 }, updatedAt: new Date() },
    });
    if (count !== 1) return false;
    await prisma.orderEvent.create({
      data: { orderId: order.id, kind: 'status', fromStatus: order.status, toStatus: typeof data.status === 'string' ? data.status : order.status, detail: { detail: note, eventId: event.id } },
    });
    return true;
  }

  async function unknownOutcome(order: OrderRow): Promise<boolean> {
    return order.status === 'needs_attention' && (await prisma.orderCard.count({ where: { orderId: order.id } })) === 0;
  }

  /** The provider says this transaction's reservation is gone: nothing was paid. */
  async function reservationEnded(order: OrderRow, event: WebhookEventLike, status: string): Promise<string | undefined> {
    if (!(await unknownOutcome(order))) return undefined;
    const note = `the provider reports the transaction ${status}: nothing was paid`;
    const done = await settle(order, { status: 'failed', failureCode: `reservation_${status}`, failureMessage: note, failureUpstreamCode: null, statusDetail: note }, event, note);
    return done ? note : undefined;
  }

  /** The provider says it was paid: ask it for the codes once more with the same transaction_id. */
  async function paid(order: OrderRow, event: WebhookEventLike): Promise<string | undefined> {
    if (!order.transactionId || !(await unknownOutcome(order))) return undefined;
    const note = 'the provider reports the transaction paid: confirming once more with the same transaction_id to receive the codes';
    // confirmAttempts stays as it is, so the state machine allows exactly one more confirm.
    const done = await settle(order, { status: 'reserved', statusDetail: note }, event, note);
    if (done) await enqueueOrder(queues, order.id);
    return done ? note : undefined;
  }

  async function orderEvent(event: WebhookEventLike, act: (order: OrderRow, data: Data) => Promise<string | undefined>): Promise<TopicResult> {
    const data = dataOf(event);
    const found = await match(data);
    if (!found) {
      await flag(event, 'names no order this gateway knows: the provider may hold a reservation no order tracks');
      return { outcome: 'ignored', note: 'no matching order' };
    }
    if (!found.current) {
      await record(found.order.id, event, data, 'names a transaction number this order used before a support retry');
      await flag(event, `names transaction number ${integerText(data.transaction_number) ?? '?'}, which order ${found.order.id} used before a retry`);
      return { outcome: 'processed', orderId: found.order.id, note: 'previous transaction number' };
    }
    const note = await act(found.order, data);
    await record(found.order.id, event, data, note);
    return { outcome: 'processed', orderId: found.order.id, ...(note ? { note } : {}) };
  }

  const handlers: Record<OrderTopic, (event: WebhookEventLike) => Promise<TopicResult>> = {
    order_created: (event) =>
      orderEvent(event, async (order, data) => {
        const transactionId = text(data.transaction_id);
        if (!transactionId || order.transactionId) return undefined;
        if (text(data.card_id) !== order.cardId || Number(data.quantity) !== order.quantity) {
          await flag(event, 'card or quantity differs from the order');
          return undefined;
        }
        if (!(order.status === 'needs_attention' && order.statusDetail?.startsWith('initiate_'))) return undefined;
        const note = 'the provider reported the reservation (order.created): transaction_id learned, confirming';
        const done = await settle(order, { status: 'reserved', transactionId, statusDetail: note }, event, note);
        if (done) await enqueueOrder(queues, order.id);
        return done ? note : undefined;
      }),

    order_status: (event) =>
      orderEvent(event, async (order, data) => {
        const status = text(data.status);
        if (status === 'cancelled' || status === 'expired') return reservationEnded(order, event, status);
        if (status === 'confirmed') return paid(order, event);
        return undefined;
      }),

    order_final: (event) =>
      orderEvent(event, async (order, data) => {
        const status = text(data.status);
        if (status === 'cancelled') return reservationEnded(order, event, 'cancelled');
        if (status === 'completed') {
          const count = Number(data.cards_count);
          const stored = await prisma.orderCard.count({ where: { orderId: order.id } });
          if (order.status === 'fulfilled' && Number.isInteger(count) && count !== stored) {
            await flag(event, `the provider reports ${count} card(s); ${stored} stored`);
          }
          return paid(order, event);
        }
        return undefined;
      }),

    busy_on: async (event) => {
      const data = dataOf(event);
      const untilText = text(data.until);
      const until = untilText && !Number.isNaN(Date.parse(untilText)) ? new Date(untilText) : null;
      const state = await busy.set(true, { reason: text(data.reason) ?? null, until, ...(event.occurredAt ? { eventAt: event.occurredAt } : {}) });
      return state.applied ? { outcome: 'processed', note: 'busy mode on' } : { outcome: 'ignored', note: 'older than the busy-mode change in force' };
    },

    busy_off: async (event) => {
      const state = await busy.set(false, event.occurredAt ? { eventAt: event.occurredAt } : {});
      if (!state.applied) return { outcome: 'ignored', note: 'older than the busy-mode change in force' };
      // Release held orders now rather than at their next re-check.
      const held = await prisma.order.findMany({ where: { status: 'queued', statusDetail: 'provider_busy' }, select: { id: true }, take: 10_000 });
      for (const { id } of held) {
        const job = await queues.get('order-pipeline').getJob(id);
        if (job && (await job.isDelayed())) await job.promote().catch(() => undefined);
      }
      return { outcome: 'processed', note: `busy mode off; ${held.length} held order(s) released` };
    },
  };
  return handlers;
}
