import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../errors.js';
import type { Redis } from '../redis.js';

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
 */
async function rateLimitPlugin(app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    redis: opts.redis,
    nameSpace: opts.nameSpace,
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
