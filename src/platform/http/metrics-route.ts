import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../metrics.js';

/**
 * GET /metrics in Prometheus' text format, unauthenticated like /healthz: expose it only to the
 * internal network (it names no secret, but tells an outsider a lot). Also counts provider
 * webhook answers by status, without touching the receiver's own code.
 */
/** The provider's webhook route, whose answers are counted by status. */
const WEBHOOK_ROUTE = '/webhooks/upstream';

async function metricsRoute(app: FastifyInstance, { metrics }: { metrics: Metrics }): Promise<void> {
  app.get('/metrics', { logLevel: 'warn', schema: { tags: ['operations'], summary: 'Prometheus metrics', hide: false } }, async (_request, reply) => {
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  // Only the webhook route gets this hook: a global onResponse hook would cost every request
  // (the catalog reads most of all) a call for nothing. Routes registered after this plugin
  // pass through onRoute, and the webhook receiver is registered after it.
  const recordWebhook: onResponseHookHandler = (_request, reply, done) => {
    metrics.recordWebhook(reply.statusCode);
    done();
  };
  app.addHook('onRoute', (route) => {
    if (route.url !== WEBHOOK_ROUTE) return;
    const existing = route.onResponse;
    route.onResponse = existing === undefined ? [recordWebhook] : [...(Array.isArray(existing) ? existing : [existing]), recordWebhook];
  });
}

export default fp(metricsRoute, { name: 'metrics-route' });
