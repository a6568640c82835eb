import { AppError } from '../errors.js';
import type { Prisma, PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import { callbackEventForStatus } from './callbacks/index.js';
import type { CardEncrypter, TerminalHooks } from './pipeline.js';
import type { OrderRow } from './order-store.js';

/**
 * What support may do with an order in needs_attention, and why each is safe:
 *
 * retry
 *  - with a transaction_id: back to 'reserved', so the pipeline confirms again with that same
 *    transaction_id (a confirm can never reserve more cards; the provider refuses or answers).
 *  - without one (the initiate's outcome was unknown): only after support has checked with the
 *    provider that the order's transaction number holds no reservation (`noReservationConfirmed`).
 *    The order then gets a NEW transaction number and starts over; the old number is kept in
 *    previousTransactionNumbers, so a reservation that turns up later is still traceable.
 *  - never when cards are already stored (resolve it instead).
 * resolve
 *  - 'failed': support established that the provider holds no paid order for it.
 *  - 'fulfilled': support recovered the codes at the provider's console and enters them here;
 *    they are encrypted like any other. Without codes only if all cards are already stored.
 * Every action is written on the order's timeline with who did it and why.
 */

export interface SupportActor {
  /** API key id of the person's key. */
  keyId: string;
  name: string;
}

export interface SupportActionDeps {
  prisma: PrismaClient;
  vault: CardEncrypter;
  terminal: TerminalHooks;
  /** Queues the order's pipeline job. */
  enqueue: (orderId: string) => Promise<boolean>;
  log: Logger;
}

function requireAttention(order: OrderRow | null, orderId: string): OrderRow {
  if (!order) throw new AppError('order_not_found', 'No such order.', { details: { orderId } });
  if (order.status !== 'needs_attention') {
    throw new AppError('order_not_actionable', `Only orders in needs_attention can be retried or resolved; this one is ${order.status}.`, {
      details: { orderId, orderStatus: order.status },
    });
  }
  return order;
}

/** The compare-and-set all support actions use: the order is still exactly what support looked at. */
async function update(tx: Prisma.TransactionClient, order: OrderRow, data: Prisma.OrderUpdateManyMutationInput): Promise<OrderRow> {
  const { count } = await tx.order.updateMany({ where: { id: order.id, version: order.version, status: 'needs_attention' }, data: { ...data, version: { increment: 1 }, updatedAt: new Date() } });
  if (count !== 1) throw new AppError('conflict', 'The order changed while this action was being taken; look again.', { details: { orderId: order.id } });
  return tx.order.findUniqueOrThrow({ where: { id: order.id } });
}

export function createSupportActions(deps: SupportActionDeps) {
  const { prisma, log } = deps;

  return {
    async retry(orderId: string, actor: SupportActor, opts: { note: string; noReservationConfirmed?: boolean }): Promise<OrderRow> {
      const order = requireAttention(await prisma.order.findUnique({ where: { id: orderId } }), orderId);
      if ((await prisma.orderCard.count({ where: { orderId } })) > 0) {
        throw new AppError('order_not_actionable', 'This order already holds cards from the provider; resolve it instead of retrying.', { details: { orderId } });
      }
      let updated: OrderRow;
      if (order.transactionId) {
        updated = await prisma.$transaction(async (tx) => {
          const row = await update(tx, order, { status: 'reserved', confirmAttempts: 0, statusDetail: 'retry by support: confirming again with the same transaction_id' });
          await tx.orderEvent.create({
            data: { orderId, kind: 'support', fromStatus: order.status, toStatus: 'reserved', detail: { action: 'retry', actor: actor.name, keyId: actor.keyId, note: opts.note } },
          });
          return row;
        });
      } else {
        if (!opts.noReservationConfirmed) {
          throw new AppError(
            'confirmation_required',
            `The provider may hold a reservation for transaction number ${order.transactionNumber.toString()}. Check with the provider first, then retry with noReservationConfirmed: true; the order will get a new transaction number.`,
            { details: { orderId, transactionNumber: Number(order.transactionNumber) } },
          );
        }
        updated = await prisma.$transaction(async (tx) => {
          const [{ next }] = await tx.$queryRaw<[{ next: bigint }]>`SELECT nextval(pg_get_serial_sequence('orders', 'transaction_number')) AS next`;
          const row = await update(tx, order, {
            status: 'queued',
            transactionNumber: next,
            previousTransactionNumbers: { push: order.transactionNumber },
            balanceChecks: 0,
            initiateAttempts: 0,
            confirmAttempts: 0,
            statusDetail: 'retry by support with a new transaction number',
          });
          await tx.orderEvent.create({
            data: {
              orderId,
              kind: 'support',
              fromStatus: order.status,
              toStatus: 'queued',
              detail: { action: 'retry', actor: actor.name, keyId: actor.keyId, note: opts.note, previousTransactionNumber: order.transactionNumber.toString(), transactionNumber: next.toString() },
            },
          });
          return row;
        });
      }
      log.info({ orderId, actor: actor.name, to: updated.status }, 'support retried an order');
      await deps.enqueue(orderId);
      return updated;
    },

    async resolve(
      orderId: string,
      actor: SupportActor,
      opts: { outcome: 'failed' | 'fulfilled'; note: string; cards?: { code: string; number: string }[] },
    ): Promise<OrderRow> {
      const order = requireAttention(await prisma.order.findUnique({ where: { id: orderId } }), orderId);
      const stored = await prisma.orderCard.count({ where: { orderId } });
      const entered = opts.cards ?? [];
      if (opts.outcome === 'fulfilled') {
        if (stored + entered.length !== order.quantity) {
          throw new AppError('bad_request', `A fulfilled order needs ${order.quantity} card(s): ${stored} stored, ${entered.length} entered.`, { details: { orderId } });
        }
      } else if (entered.length > 0) {
        throw new AppError('bad_request', 'Cards can only be entered when resolving as fulfilled.', { details: { orderId } });
      }
      let outboxIds: string[] = [];
      const updated = await prisma.$transaction(async (tx) => {
        if (entered.length > 0) {
          await tx.orderCard.createMany({
            data: entered.map((card, i) => {
              const position = stored + i;
              const sealed = deps.vault.encrypt({ orderId, position, code: card.code });
              return { orderId, position, keyId: sealed.keyId, nonce: Buffer.from(sealed.nonce), ciphertext: Buffer.from(sealed.ciphertext), cardNumber: card.number };
            }),
          });
        }
        const row = await update(
          tx,
          order,
          opts.outcome === 'failed'
            ? { status: 'failed', statusDetail: `resolved by support: ${opts.note}`, failureCode: 'resolved_by_support', failureMessage: opts.note, failureUpstreamCode: null }
            : { status: 'fulfilled', statusDetail: `resolved by support: ${opts.note}`, fulfilledAt: new Date() },
        );
        await tx.orderEvent.create({
          data: {
            orderId,
            kind: 'support',
            fromStatus: order.status,
            toStatus: opts.outcome,
            detail: { action: 'resolve', actor: actor.name, keyId: actor.keyId, note: opts.note, cardsEntered: entered.length },
          },
        });
        if (callbackEventForStatus(row.status)) outboxIds = await deps.terminal.inTransaction(tx, row);
        return row;
      });
      log.info({ orderId, actor: actor.name, outcome: opts.outcome }, 'support resolved an order');
      await deps.terminal.afterCommit(updated, outboxIds).catch(() => undefined);
      return updated;
    },
  };
}

export type SupportActions = ReturnType<typeof createSupportActions>;
