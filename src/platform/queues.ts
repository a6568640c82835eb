import { Queue, Worker, type ConnectionOptions, type JobsOptions, type Processor, type WorkerOptions } from 'bullmq';
import type { Redis } from './redis.js';

/**
 * Every queue the gateway uses, with the type of its job payload. Payloads carry identifiers
 * only, never secrets or card codes: the state itself lives in PostgreSQL, which is what lets a
 * reconciler rebuild queue work after Redis loses its data.
 */
export interface QueuePayloads {
  /** One catalog sync; `slot` makes N scheduler instances enqueue one job per cron slot. */
  'catalog-sync': { reason: 'schedule' | 'startup' | 'manual'; slot?: string };
  /** Drives one order through balance → initiate → confirm. */
  'order-pipeline': { orderId: string };
  /** Processes one stored provider webhook event. */
  'webhook-inbox': { eventId: string };
  /** Delivers one storefront callback for an order event. */
  'order-callback': { deliveryId: string };
}

export type QueueName = keyof QueuePayloads;

export const QUEUE_NAMES: readonly QueueName[] = ['catalog-sync', 'order-pipeline', 'webhook-inbox', 'order-callback'];

/** Default job options: keep a bounded history so Redis memory stays flat. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  removeOnComplete: { age: 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
};

export interface QueueRegistry {
  readonly prefix: string;
  get<N extends QueueName>(name: N): Queue<QueuePayloads[N], unknown, string>;
  /** A worker with its own blocking connection (`maxRetriesPerRequest: null`). */
  worker<N extends QueueName>(
    name: N,
    processor: Processor<QueuePayloads[N], unknown, string>,
    options?: Omit<WorkerOptions, 'connection' | 'prefix'>,
  ): Worker<QueuePayloads[N], unknown, string>;
  close(): Promise<void>;
}

export interface QueueRegistryOptions {
  redisUrl: string;
  /** Fail-fast connection shared by all producers (see redis.ts). */
  producer: Redis;
  /** Redis key prefix; tests use their own so they never see each other's jobs. */
  prefix: string;
}

function workerConnection(redisUrl: string): ConnectionOptions {
  // Blocking worker commands must wait out a Redis outage rather than fail (BullMQ's guide).
  return {
    url: redisUrl,
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    connectTimeout: 5_000,
    retryStrategy: (times: number) => Math.min(times * 100, 2_000),
  };
}

export function createQueueRegistry({ redisUrl, producer, prefix }: QueueRegistryOptions): QueueRegistry {
  const queues = new Map<QueueName, Queue>();
  const workers: Worker[] = [];
  return {
    prefix,
    get(name) {
      let queue = queues.get(name);
      if (!queue) {
        queue = new Queue(name, { connection: producer, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
        queues.set(name, queue);
      }
      return queue as unknown as Queue<QueuePayloads[typeof name], unknown, string>;
    },
    worker(name, processor, options = {}) {
      const worker = new Worker(name, processor, {
        ...options,
        connection: workerConnection(redisUrl),
        prefix,
      });
      workers.push(worker);
      return worker;
    },
    async close() {
      // Workers first: they finish their in-flight jobs before the producers go away.
      await Promise.allSettled(workers.map((w) => w.close()));
      await Promise.allSettled([...queues.values()].map((q) => q.close()));
    },
  };
}
