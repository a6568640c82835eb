import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../metrics.js';

/**
 * GET /metrics in Prometheus' text format, unauthenticated like /healthz: expose it only to the
 * internal network (it names no secret, but tells an outsider a lot). Also counts provider
 * webhook answers by status, without touching the receiver's own code.
 */
async function metricsRoute(app: FastifyInstance, { metrics }: { metrics: Metrics }): Promise<void> {
  app.get('/metrics', { logLevel: 'warn', schema: { tags: ['operations'], summary: 'Prometheus metrics', hide: false } }, async (_request, reply) => {
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.addHook('onResponse', async (request, reply) => {
    if (request.routeOptions.url === '/webhooks/upstream') metrics.recordWebhook(reply.statusCode);
  });
}

export default fp(metricsRoute, { name: 'metrics-route' });
