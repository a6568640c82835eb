import type { Redis } from '../platform/redis.js';

export function orderSettledChannel(prefix: string): string {
  return `${prefix}:orders:settled`;
}

/**
 * `Prefer: wait=N`: requests waiting for an order to settle. Whichever instance settles an order
 * publishes its id; every API instance wakes its local waiters for that id.
 */
export function createOrderWaiters() {
  const waiting = new Map<string, Set<() => void>>();
  return {
    notify(orderId: string): void {
      const set = waiting.get(orderId);
      if (!set) return;
      waiting.delete(orderId);
      for (const wake of set) wake();
    },
    /**
     * Resolves when the order is announced settled or after `ms`. `isSettled` is checked once
     * after subscribing, so an order that settled just before cannot be missed.
     */
    async wait(orderId: string, ms: number, isSettled: () => Promise<boolean>): Promise<void> {
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      const set = waiting.get(orderId) ?? new Set();
      set.add(wake);
      waiting.set(orderId, set);
      const timer = setTimeout(wake, ms);
      try {
        if (await isSettled()) return;
        await woken;
      } finally {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && waiting.get(orderId) === set) waiting.delete(orderId);
      }
    },
    get size(): number {
      return waiting.size;
    },
  };
}

export type OrderWaiters = ReturnType<typeof createOrderWaiters>;

export async function listenForSettledOrders(subscriber: Redis, channel: string, waiters: OrderWaiters): Promise<() => Promise<void>> {
  const onMessage = (ch: string, orderId: string) => {
    if (ch === channel) waiters.notify(orderId);
  };
  subscriber.on('message', onMessage);
  await subscriber.subscribe(channel);
  return async () => {
    subscriber.off('message', onMessage);
    await subscriber.unsubscribe(channel).catch(() => undefined);
  };
}

/** Parses RFC 7240 `Prefer: wait=N`; returns seconds clamped to [0, max], or undefined. */
export function preferWaitSeconds(header: string | string[] | undefined, max = 60): number | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return undefined;
  const match = /(?:^|[,;\s])wait\s*=\s*"?(\d{1,6})"?/i.exec(value);
  if (!match) return undefined;
  return Math.min(max, Number(match[1]));
}
