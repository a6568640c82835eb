import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';

export type { Redis } from 'ioredis';

/**
 * Connection kinds, as BullMQ's production guide asks:
 * - `worker`: blocking commands must wait for Redis to come back, so requests are retried
 *   forever (`maxRetriesPerRequest: null`).
 * - `producer`: code on the HTTP path must fail fast when Redis is down, so the offline queue is
 *   disabled and a command fails at once instead of piling up.
 * - `subscriber`: pub/sub listeners, reconnecting forever.
 */
export type RedisRole = 'worker' | 'producer' | 'subscriber';

export function redisOptions(role: RedisRole): RedisOptions {
  const base: RedisOptions = {
    lazyConnect: false,
    connectTimeout: 5_000,
    // Back off to at most 2 s between reconnection attempts; never give up.
    retryStrategy: (times) => Math.min(times * 100, 2_000),
  };
  switch (role) {
    case 'worker':
    case 'subscriber':
      return { ...base, maxRetriesPerRequest: null, enableOfflineQueue: true };
    case 'producer':
      // Auto-pipelining batches the commands issued in one event-loop tick (rate-limit counters of
      // concurrent requests) into one round trip.
      return { ...base, maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true };
  }
}

export function createRedis(url: string, role: RedisRole, log?: Logger): Redis {
  const client = new Redis(url, redisOptions(role));
  // Without a listener ioredis prints unhandled error events; log them once per state change.
  let lastError = '';
  client.on('error', (err: Error) => {
    if (err.message !== lastError) log?.warn({ role, err: { message: err.message } }, 'redis connection error');
    lastError = err.message;
  });
  client.on('ready', () => {
    lastError = '';
  });
  return client;
}

/** Waits until the client is ready, or fails after `timeoutMs`. */
export async function waitForRedis(client: Redis, timeoutMs = 5_000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
    };
    client.on('ready', onReady);
  });
}

export async function pingRedis(client: Redis): Promise<void> {
  const answer = await client.ping();
  if (answer !== 'PONG') throw new Error('unexpected answer to PING');
}

/**
 * BullMQ keeps jobs as Redis keys; an eviction policy other than `noeviction` lets Redis delete
 * them under memory pressure, silently losing work. Warn, do not refuse: the reconciler rebuilds
 * queue work from PostgreSQL, and a managed Redis may not allow CONFIG GET.
 */
export async function checkEvictionPolicy(client: Redis, log: Logger): Promise<string | undefined> {
  try {
    const reply = await client.config('GET', 'maxmemory-policy');
    const policy = reply[1];
    if (policy !== 'noeviction') {
      log.warn(
        { maxmemoryPolicy: policy },
        'Redis maxmemory-policy is not noeviction: queued jobs may be evicted under memory pressure; set maxmemory-policy noeviction',
      );
    }
    return policy;
  } catch (err) {
    log.warn({ err: { message: (err as Error).message } }, 'could not read Redis maxmemory-policy (CONFIG GET refused?)');
    return undefined;
  }
}
