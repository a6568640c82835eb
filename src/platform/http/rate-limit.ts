import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../errors.js';
import type { Redis } from '../redis.js';
import { createBatchedRateLimitStore } from './batched-rate-limit-store.js';

export interface RateLimitOptions {
  redis: Redis;
  max: number;
  windowMs: number;
  nameSpace: string;
}

/**
 * Per-API-key limits with counters in Redis, so every instance shares them. Runs at preHandler,
 * after the route's authentication (onRequest), because the key is the bucket. Routes without a
 * key (health, docs) are not limited here. When Redis is unreachable the limiter lets requests
 * through (`skipOnError`): refusing all traffic because a counter store is down would turn a
 * Redis blip into an outage.
 *
 * The store counts locally and sends counts to Redis in batches while a key is far from its limit,
 * and goes to Redis for every request near it (batched-rate-limit-store.ts); the app's close
 * flushes what is still pending.
 */
async function rateLimitPlugin(app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  const limiter = createBatchedRateLimitStore({ redis: opts.redis, nameSpace: opts.nameSpace });
  app.addHook('onClose', async () => {
    await limiter.close();
  });
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    store: limiter.Store,
    max: opts.max,
    timeWindow: opts.windowMs,
    skipOnError: true,
    allowList: (request) => request.apiKey === null,
    keyGenerator: (request) => request.apiKey?.id ?? request.ip,
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `Too many requests for this API key; retry after ${context.after}.`, {
        details: { limit: context.max },
        headers: { 'retry-after': String(Math.max(1, Math.ceil(context.ttl / 1000))) },
      }),
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth'] });
