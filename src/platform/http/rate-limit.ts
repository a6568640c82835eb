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
 * Per-API-key limits with counters in Redis, so every instance shares them. Runs at onRequest,
 * right after the route's own authentication hook (the plugin appends its hook to the route's
 * onRequest list, so the key, which is the bucket, is known), and so before the body is parsed:
 * a spent key costs no parsing or validation, and a request runs one hook phase fewer. Routes without a
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
    hook: 'onRequest',
    store: limiter.Store,
    max: opts.max,
    timeWindow: opts.windowMs,
    skipOnError: true,
    // No x-ratelimit-* headers on answers within the budget: three more headers on every
    // response cost ~8% of a cached catalog read (bytes and header handling on both ends).
    // A 429 carries them all with Retry-After, and GET /v1/me reports the key's budget.
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
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
