import type { Job } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/platform/logger.js';
import { createQueueRegistry, type QueuePayloads } from '../src/platform/queues.js';
import { checkEvictionPolicy, createRedis, redisOptions, waitForRedis, type Redis } from '../src/platform/redis.js';
import { LogCapture } from './helpers/context.js';
import { TEST_REDIS_URL } from './helpers/env.js';
import { createTestQueues } from './helpers/queues.js';

describe('queues and Redis', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('uses BullMQ production settings for each connection role', () => {
    expect(redisOptions('worker')).toMatchObject({ maxRetriesPerRequest: null, enableOfflineQueue: true });
    expect(redisOptions('producer')).toMatchObject({ maxRetriesPerRequest: 1, enableOfflineQueue: false });
  });

  it('runs a typed job through a worker under the registry prefix', async () => {
    const { producer, queues, prefix, close } = await createTestQueues();
    cleanups.push(close);

    const seen: QueuePayloads['order-pipeline'][] = [];
    const done = new Promise<void>((resolve) => {
      queues.worker('order-pipeline', async (job: Job<QueuePayloads['order-pipeline']>) => {
        seen.push(job.data);
        resolve();
        return 'ok';
      });
    });
    await queues.get('order-pipeline').add('run', { orderId: 'o-1' }, { jobId: 'order-o-1' });
    await done;
    expect(seen).toEqual([{ orderId: 'o-1' }]);
    const keys = await producer.keys(`${prefix}:order-pipeline:*`);
    expect(keys.length).toBeGreaterThan(0);
  });

  it('lets an in-flight job finish when the registry closes (graceful shutdown)', async () => {
    // The test closes the registry itself; the clean-up closing it again is a no-op.
    const { producer, queues, prefix, close } = await createTestQueues();
    cleanups.push(close);

    let finished = false;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    queues.worker('catalog-sync', async () => {
      started();
      await new Promise((r) => setTimeout(r, 300));
      finished = true;
    });
    const job = await queues.get('catalog-sync').add('sync', { reason: 'manual' });
    await running;
    await queues.close();
    expect(finished).toBe(true);
    const reader = createQueueRegistry({ redisUrl: TEST_REDIS_URL, producer, prefix });
    expect(await reader.get('catalog-sync').getJobState(job.id!)).toBe('completed');
    await reader.close();
  });

  it('fails fast on the producer connection when Redis is unreachable', async () => {
    const producer = createRedis('redis://127.0.0.1:1', 'producer');
    cleanups.push(async () => producer.disconnect());
    const started = Date.now();
    await expect(producer.ping()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  // A stub, not CONFIG SET on the shared Redis: concurrent test runs would race on the setting.
  function stubRedis(answer: () => Promise<unknown>): Redis {
    return { config: (...args: unknown[]) => (args.join(' ') === 'GET maxmemory-policy' ? answer() : Promise.reject(new Error('unexpected'))) } as unknown as Redis;
  }

  it('warns when maxmemory-policy is not noeviction', async () => {
    const logs = new LogCapture();
    expect(await checkEvictionPolicy(stubRedis(async () => ['maxmemory-policy', 'allkeys-lru']), createLogger('info', logs))).toBe('allkeys-lru');
    expect(logs.text).toMatch(/maxmemory-policy is not noeviction/);
  });

  it('stays quiet when maxmemory-policy is noeviction, and warns when CONFIG GET is refused', async () => {
    const quiet = new LogCapture();
    expect(await checkEvictionPolicy(stubRedis(async () => ['maxmemory-policy', 'noeviction']), createLogger('info', quiet))).toBe('noeviction');
    expect(quiet.lines).toEqual([]);
    const refused = new LogCapture();
    expect(await checkEvictionPolicy(stubRedis(() => Promise.reject(new Error("ERR unknown command 'CONFIG'"))), createLogger('info', refused))).toBeUndefined();
    expect(refused.text).toMatch(/could not read Redis maxmemory-policy/);
  });

  it('reads the policy of the real Redis', async () => {
    const client = createRedis(TEST_REDIS_URL, 'producer');
    cleanups.push(async () => client.quit());
    await waitForRedis(client);
    expect(await checkEvictionPolicy(client, createLogger('silent'))).toMatch(/^[a-z-]+$/);
  });
});
