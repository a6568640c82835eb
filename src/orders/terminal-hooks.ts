import type { Logger } from '../platform/logger.js';
import type { QueueRegistry } from '../platform/queues.js';
import type { Redis } from '../platform/redis.js';
import { callbackEventForStatus, enqueueCallbackDeliveries, insertCallbackOutbox } from './callbacks/index.js';
import { orderSettledChannel } from './order-waiters.js';
import type { TerminalHooks } from './pipeline.js';

/**
 * When an order settles: its storefront callback goes into the outbox in the same transaction,
 * then (after commit) the delivery is queued and waiting `Prefer: wait` requests are woken on
 * every instance.
 */
export function createTerminalHooks({ queues, publisher, log }: { queues: QueueRegistry; publisher: Redis; log: Logger }): TerminalHooks {
  const channel = orderSettledChannel(queues.prefix);
  return {
    writesFor(order) {
      // Only the callback outbox row; callbackEventForStatus is checked on the written row.
      return order.callbackUrl !== null;
    },
    async inTransaction(tx, order) {
      const event = callbackEventForStatus(order.status);
      if (!event) return [];
      const id = await insertCallbackOutbox(tx, order, event);
      return id ? [id] : [];
    },
    async afterCommit(order, outboxIds) {
      await Promise.all([
        publisher.publish(channel, order.id).catch((err: Error) => log.debug({ err: { message: err.message } }, 'could not announce settled order')),
        outboxIds.length > 0 ? enqueueCallbackDeliveries(queues, outboxIds) : Promise.resolve(),
      ]);
    },
  };
}
