import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import errorHandler from './error-handler.js';
import { healthRoutes, type ReadinessCheck } from './health-routes.js';
import metricsRoute from './metrics-route.js';

/**
 * Worker and scheduler processes serve no API, but orchestrators still need to probe them and
 * Prometheus to scrape them: this listener answers /healthz, /readyz and /metrics only.
 */
export async function startOpsServer(opts: { log: Logger; host: string; port: number; checks: ReadinessCheck[]; metrics: Metrics }): Promise<{ app: FastifyInstance; url: string }> {
  const loggerInstance: FastifyBaseLogger = opts.log;
  const app = Fastify({ loggerInstance, disableRequestLogging: false });
  await app.register(errorHandler);
  await app.register(healthRoutes, { checks: opts.checks });
  await app.register(metricsRoute, { metrics: opts.metrics });
  const url = await app.listen({ host: opts.host, port: opts.port });
  return { app, url };
}
