import { createQueueRegistry, type QueueRegistry } from '../../src/platform/queues.js';
import { createRedis, waitForRedis, type Redis } from '../../src/platform/redis.js';
import { TEST_REDIS_URL, uniqueId } from './env.js';

export interface TestQueues {
  /** The producer connection the registry shares (also fine for publishing and key lookups). */
  producer: Redis;
  queues: QueueRegistry;
  /** The registry's Redis key prefix, unique to this call. */
  prefix: string;
  /** Closes the registry, deletes every key under `prefix` and quits the producer. */
  close: () => Promise<void>;
}

/** A queue registry on the test Redis under a fresh prefix (`label` + a unique suffix). */
export async function createTestQueues(label = 'q'): Promise<TestQueues> {
  const producer = createRedis(TEST_REDIS_URL, 'producer');
  await waitForRedis(producer);
  const prefix = uniqueId(label);
  const queues = createQueueRegistry({ redisUrl: TEST_REDIS_URL, producer, prefix });
  return {
    producer,
    queues,
    prefix,
    async close() {
      await queues.close();
      const keys = await producer.keys(`${prefix}:*`);
      if (keys.length) await producer.del(...keys);
      await producer.quit();
    },
  };
}
