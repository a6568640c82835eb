import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import Fastify, { LogController, type preValidationHookHandler, type FastifyServerOptions, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ApiComponents } from './api-components.js';
import type { Config } from './config/index.js';
import { healthRoutes } from './platform/http/health-routes.js';
import { rejectUnstorable, strictFormats } from './platform/http/input-guards.js';
import { lazyChildLoggerFactory } from './platform/http/lazy-request-logger.js';
import ajvFormatsModule from 'ajv-formats';
import metricsRoute from './platform/http/metrics-route.js';
import type { Logger } from './platform/logger.js';
import { levels } from 'pino';
import type { Redis } from './platform/redis.js';
import docs from './platform/http/docs.js';
import errorHandler, { REQUEST_ID_HEADER, toProblem } from './platform/http/error-handler.js';
import { PROBLEM_CONTENT_TYPE } from './platform/http/problem.js';
import rateLimit from './platform/http/rate-limit.js';
import { catalogRoutes } from './catalog/catalog-routes.js';
import { orderRoutes } from './orders/order-routes.js';
import { OrderSchema } from './orders/order-view.js';
import { supportRoutes } from './support/support-routes.js';
import consolePlugin from './support/console/console-plugin.js';
import { webhookPlugin } from './webhooks/index.js';
import auth from './security/auth-plugin.js';
import { keyRoutes } from './security/key-routes.js';
import { VERSION } from './version.js';

type AjvPlugin = NonNullable<NonNullable<FastifyServerOptions['ajv']>['plugins']>[number];
// ajv-formats is CommonJS: under NodeNext its function is the module's `default`.
const ajvFormats = ((ajvFormatsModule as unknown as { default?: AjvPlugin }).default ?? ajvFormatsModule) as AjvPlugin;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: this route's input never reaches the database, so the NUL/surrogate guard is skipped. */
    inputGuard?: boolean;
  }
}

export type App = FastifyInstance<Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface AppDeps extends ApiComponents {
  config: Pick<Config, 'http' | 'rateLimit' | 'queuePrefix' | 'orders' | 'catalog' | 'webhooks'>;
  log: Logger;
  /** Fail-fast Redis connection (rate-limit counters). */
  redis: Redis;
}

const SLOW_REQUEST_MS = 1_000;

/**
 * One access line per request: at info for writes, errors and slow requests (what operators
 * look for), at debug for successful reads, which are many and cheap (catalog, polling).
 * Written from Fastify's LogController (its documented extension point, called for every
 * finished response) rather than an onResponse hook, which would add a hook phase to every
 * request; Fastify's own two lines per request (incoming, completed) are not written.
 */
class AccessLog extends LogController {
  constructor() {
    // Fastify's other internal lines (route not found, default error handler) stay off: the
    // error handler and the not-found handler are ours and log what they handle.
    super({ disableRequestLogging: true });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const ms = reply.elapsedTime;
    const interesting = error || request.method !== 'GET' || reply.statusCode >= 400 || ms >= SLOW_REQUEST_MS;
    const level = interesting ? 'info' : 'debug';
    // Not even the line's object for a disabled level (request.routeOptions builds one per access).
    if (levels.values[level]! < (levels.values[request.log.level] ?? 0)) return;
    request.log[level](
      {
        method: request.method,
        url: request.routeOptions.url ?? request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(ms * 10) / 10,
        key: request.apiKey?.prefix,
        ...(error ? { err: { message: error.message } } : {}),
      },
      'request',
    );
  }
}

/** Max JSON body; every route's input is small. Larger bodies get 413 before parsing. */
const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Builds the HTTP application from its dependencies: no listen, no globals, no process.env, so
 * tests build the real thing and call `app.inject` or listen on port 0.
 * Order: error handling and docs first, then authentication and rate limits, then routes.
 */
export async function buildApp(deps: AppDeps): Promise<App> {
  // Typed as Fastify's base logger so the instance type stays the plain `App`.
  const loggerInstance: FastifyBaseLogger = deps.log;
  const app = Fastify({
    loggerInstance,
    trustProxy: deps.config.http.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false },
      // ajv-formats first (Fastify then does not add it again), then ours, replacing its looser
      // uuid and date-time.
      plugins: [ajvFormats, strictFormats],
    },
    // Router errors (malformed percent-encoding, over-long parameters) go through the error
    // handler too, so they are problem details like every other error.
    frameworkErrors: (error, request, reply) => {
      const { body } = toProblem(error, request);
      // The reply is typed for no route in particular here; it is an ordinary reply.
      void (reply as unknown as FastifyReply).status(body.status).header(REQUEST_ID_HEADER, String(request.id)).type(PROBLEM_CONTENT_TYPE).send(body);
    },
    // Fastify's two lines per request cost more than the catalog answer itself; AccessLog
    // writes one line, at info only when it matters.
    logController: new AccessLog(),
    childLoggerFactory: lazyChildLoggerFactory,
    // Route responses are serialised through their schemas: an allowlist, so a field that is not
    // declared (a secret, a code) can never leak by accident.
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Strings PostgreSQL cannot store (NUL, unpaired surrogates) are refused before any handler,
  // on every route registered from here on, except those whose input never reaches the
  // database or a log as a value (`config: { inputGuard: false }`: the in-memory catalog reads,
  // where an odd identifier is simply not found). Per route rather than a global hook, so those
  // routes skip the preValidation phase altogether.
  const inputGuard: preValidationHookHandler = (request, _reply, done) => {
    try {
      rejectUnstorable('path', request.params);
      rejectUnstorable('query', request.query);
      rejectUnstorable('body', request.body);
      done();
    } catch (err) {
      done(err as Error);
    }
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.inputGuard === false) return;
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [inputGuard] : [inputGuard, ...(Array.isArray(existing) ? existing : [existing])];
  });

  await app.register(errorHandler);
  await app.register(docs, { version: VERSION });
  await app.register(auth, { apiKeys: deps.apiKeys });
  await app.register(rateLimit, {
    redis: deps.redis,
    max: deps.config.rateLimit.max,
    windowMs: deps.config.rateLimit.windowMs,
    nameSpace: `${deps.config.queuePrefix}:ratelimit:`,
  });

  // Schemas several route plugins refer to ($ref) live at the root.
  app.addSchema(OrderSchema);
  await app.register(healthRoutes, { checks: deps.readinessChecks });
  await app.register(metricsRoute, { metrics: deps.metrics });
  await app.register(keyRoutes);
  await app.register(catalogRoutes, { cache: deps.catalog });
  // Plain register (not fastify-plugin): the receiver's raw-body parser stays inside it.
  await app.register(webhookPlugin, deps.webhooks);
  await app.register(supportRoutes, { support: deps.support, actions: deps.supportActions, timeZone: deps.config.catalog.timeZone ?? 'UTC' });
  // Static support console (its own security headers, no key for the page itself).
  await app.register(consolePlugin);
  await app.register(orderRoutes, { orders: deps.orders, vault: deps.vault, waiters: deps.waiters, maxQuantity: deps.config.orders.maxQuantity });

  return app;
}
