import type { Config } from './config/index.js';
import { buildApp, type App } from './app.js';
import { createPrisma, pingDatabase, type PrismaClient } from './platform/db.js';
import { describeUrl } from './platform/describe-url.js';
import type { Logger } from './platform/logger.js';
import { migrate } from './platform/migrate.js';
import { createQueueRegistry, type QueueRegistry } from './platform/queues.js';
import { checkEvictionPolicy, createRedis, pingRedis, waitForRedis, type Redis } from './platform/redis.js';
import { createScheduler, type Scheduler } from './platform/scheduler.js';
import { createShutdown, type Shutdown } from './platform/shutdown.js';
import { listenForRevocations } from './security/api-keys.js';
import { loadCardCodeKeys } from './security/card-code-keys.js';
import { startEmbeddedSandbox } from './embedded-sandbox.js';
import { listenForCatalogUpdates, type CatalogCache } from './catalog/catalog-cache.js';
import { createApiComponents } from './api-components.js';
import { catalogUpdatedChannel, scheduleCatalogSync, startCatalogWorker } from './catalog/catalog-jobs.js';
import { createUpstreamClient, type UpstreamCallRecord, type UpstreamClient } from './upstream/index.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { createBusyMode } from './orders/busy-mode.js';
import { startCallbackWorker } from './orders/callbacks/index.js';
import { startOrderWorker } from './orders/order-jobs.js';
import { reconcileOrders } from './orders/reconciler.js';
import { createFailpointHook } from './platform/failpoints.js';
import { createMetrics } from './platform/metrics.js';
import { startOpsServer } from './platform/http/ops-server.js';
import { createOrderStore } from './orders/order-store.js';
import { listenForSettledOrders, orderSettledChannel } from './orders/order-waiters.js';
import { createTerminalHooks } from './orders/terminal-hooks.js';
import { loadSigningSecret } from './security/signing-secret.js';
import { requeueUnprocessedWebhooks, startWebhookWorker } from './webhooks/index.js';
import { createOrderTopicHandlers } from './webhooks/order-topics.js';
import { createCardVault } from './security/card-vault.js';

export const ROLES = ['api', 'worker', 'scheduler'] as const;
export type Role = (typeof ROLES)[number];

export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

export interface Running {
  /** Where this process listens: the HTTP API, or (worker/scheduler only) the operations endpoints. */
  url: string | undefined;
  /** Base URL of the provider in use (the embedded sandbox's when none is configured). */
  upstreamUrl: string;
  app: App | undefined;
  upstream: UpstreamClient;
  catalog: CatalogCache | undefined;
  prisma: PrismaClient;
  redis: Redis;
  queues: QueueRegistry;
  scheduler: Scheduler | undefined;
  shutdown: Shutdown;
}

/** Applies pending migrations unless MIGRATE_ON_START=false (then the schema must be current). */
export async function prepareDatabase(config: Pick<Config, 'databaseUrl' | 'migrateOnStart'>, log: Logger): Promise<void> {
  if (!config.migrateOnStart) return;
  try {
    const result = await migrate(config.databaseUrl, { log });
    if (result.applied.length > 0) log.info({ applied: result.applied }, 'database migrated');
  } catch (err) {
    throw new StartupError(`cannot migrate the database at ${describeUrl(config.databaseUrl)} (DATABASE_URL): ${(err as Error).message}`, { cause: err });
  }
}

export async function connectDatabase(config: Pick<Config, 'databaseUrl' | 'databasePoolMax'>, applicationName: string): Promise<PrismaClient> {
  const prisma = createPrisma({ url: config.databaseUrl, poolMax: config.databasePoolMax, applicationName });
  try {
    await pingDatabase(prisma);
  } catch (err) {
    await prisma.$disconnect().catch(() => undefined);
    throw new StartupError(`cannot reach PostgreSQL at ${describeUrl(config.databaseUrl)} (DATABASE_URL): ${(err as Error).message}`, { cause: err });
  }
  return prisma;
}

export async function connectRedis(config: Pick<Config, 'redisUrl'>, log: Logger): Promise<Redis> {
  const redis = createRedis(config.redisUrl, 'producer', log);
  try {
    await waitForRedis(redis, 10_000);
  } catch (err) {
    redis.disconnect();
    throw new StartupError(`cannot reach Redis at ${describeUrl(config.redisUrl)} (REDIS_URL): ${(err as Error).message}`, { cause: err });
  }
  return redis;
}

/** How often API instances reload the catalog even without an announcement (a missed message). */
const CATALOG_RELOAD_EVERY_MS = 5 * 60_000;

/**
 * The provider client, against the configured provider or, with none, a sandbox started here
 * on loopback. `close` stops both.
 */
export interface ConnectedUpstream {
  client: UpstreamClient;
  url: string;
  close: () => Promise<void>;
  /** Only with the embedded sandbox: where it sends its webhooks. */
  deliverWebhooksTo?: (url: string, secrets: string[]) => void;
}

export async function connectUpstream(config: Config, log: Logger, onCall?: (call: UpstreamCallRecord) => void): Promise<ConnectedUpstream> {
  let url = config.upstream.baseUrl;
  let sandbox: Awaited<ReturnType<typeof startEmbeddedSandbox>> | undefined;
  if (url === undefined) {
    const embedded = await startEmbeddedSandbox({ config, log });
    sandbox = embedded;
    url = embedded.url;
  } else {
    log.info({ upstream: describeUrl(url) }, 'using the provider');
  }
  const client = createUpstreamClient({
    baseUrl: url,
    username: config.upstream.username,
    privateKey: config.upstream.privateKey,
    timeoutMs: config.upstream.timeoutMs,
    connections: config.upstream.connections,
    ...(config.upstream.proxyUrl ? { proxyUrl: config.upstream.proxyUrl } : {}),
    logger: log.child({ component: 'upstream' }),
    ...(onCall ? { onCall } : {}),
  });
  return {
    client,
    url,
    close: async () => {
      await client.close();
      await sandbox?.close();
    },
    ...(sandbox ? { deliverWebhooksTo: sandbox.deliverWebhooksTo } : {}),
  };
}

/**
 * The composition root of `gateway serve`: connects PostgreSQL and Redis, starts the embedded
 * sandbox when no provider is configured, then the requested roles. Everything it starts is
 * registered with the shutdown so SIGTERM stops it in reverse order.
 */
export async function serve(config: Config, roles: readonly Role[], log: Logger): Promise<Running> {
  const shutdown = createShutdown(log, config.shutdownTimeoutMs);
  try {
    await prepareDatabase(config, log);
    const prisma = await connectDatabase(config, `gateway:${roles.join('+')}`);
    shutdown.add('database', () => prisma.$disconnect());
    const redis = await connectRedis(config, log);
    shutdown.add('redis', () => redis.quit());
    await checkEvictionPolicy(redis, log);

    const busy = createBusyMode({ prisma });
    const queues = createQueueRegistry({ redisUrl: config.redisUrl, producer: redis, prefix: config.queuePrefix });
    // The catalog cache exists only with the api role; until then the age is unknown.
    let catalogAgeSeconds: () => number | undefined = () => undefined;
    const metrics = createMetrics({ prisma, queues, catalogAgeSeconds: () => catalogAgeSeconds(), busyActive: async () => (await busy.current()).active });
    const upstream = await connectUpstream(config, log, (call) => metrics.recordProviderCall(call));
    shutdown.add('provider client', upstream.close);
    // After the client in this list, so before it at shutdown: workers finish their in-flight
    // jobs (which call the provider) before the client closes.
    shutdown.add('queues', () => queues.close());

    // Loaded at start so a bad key or secret stops the process now, not at the first order.
    const vault = await createCardVault(await loadCardCodeKeys(config.cardCodeKeys, config.cardCodeKeyFile, log));
    const callbackSecret = await loadSigningSecret(config.callbacks.signingSecret, config.callbacks.devSecretFile, log, 'CALLBACK_SIGNING_SECRET');
    // With the built-in sandbox the gateway receives the sandbox's webhooks, signed with a dev
    // secret unless one is configured; with a real provider, only configured secrets verify.
    const webhookSecrets =
      config.webhooks.secrets.length > 0
        ? config.webhooks.secrets
        : config.upstream.baseUrl === undefined
          ? [await loadSigningSecret(undefined, config.webhooks.devSecretFile, log, 'UPSTREAM_WEBHOOK_SECRET')]
          : [];

    if (roles.includes('worker')) {
      await startCatalogWorker({ queues, prisma, upstream: upstream.client, log, publisher: redis, concurrency: config.catalog.syncConcurrency });
      const workerId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
      startOrderWorker({
        queues,
        log,
        lockMs: config.orders.leaseMs,
        concurrency: config.orders.workerConcurrency,
        deps: {
          store: createOrderStore(prisma, workerId, config.orders.leaseMs),
          upstream: upstream.client,
          vault,
          busy,
          terminal: createTerminalHooks({ queues, publisher: redis, log }),
          log,
          failpoint: createFailpointHook(config.failpoints),
        },
      });
      startCallbackWorker({ queues, prisma, log, secret: callbackSecret });
      startWebhookWorker({ queues, prisma, log, handlers: createOrderTopicHandlers({ prisma, queues, busy, log }) });
    }

    let scheduler: Scheduler | undefined;
    if (roles.includes('scheduler')) {
      const started = createScheduler({ log, timeZone: config.catalog.timeZone });
      scheduler = started;
      shutdown.add('scheduler', () => started.stop());
      await scheduleCatalogSync({ scheduler: started, queues, prisma, log, cron: config.catalog.syncCron, maxAgeMs: config.catalog.syncMaxAgeMs });
      // At start nothing is in flight here; anything unsettled without a live job is picked up.
      const reconcile = (quietMs: number) =>
        Promise.all([reconcileOrders({ prisma, queues, log, quietMs }), requeueUnprocessedWebhooks({ prisma, queues }, Math.max(quietMs, 30_000))]).catch((err: Error) => {
          log.error({ err: { message: err.message } }, 'reconciliation failed; trying again at the next interval');
        });
      await reconcile(0);
      const timer = setInterval(() => void reconcile(Math.min(30_000, config.orders.reconcileIntervalMs)), config.orders.reconcileIntervalMs);
      timer.unref();
      shutdown.add('reconciler', async () => clearInterval(timer));
    }

    let app: App | undefined;
    let url: string | undefined;
    let catalog: CatalogCache | undefined;
    if (roles.includes('api')) {
      const api = createApiComponents({ config, log, prisma, redis, queues, vault, webhookSecrets }, { busy, metrics });
      catalog = api.catalog;
      catalogAgeSeconds = () => {
        const ms = api.catalog.ageMs();
        return ms === undefined ? undefined : ms / 1000;
      };
      const subscriber = createRedis(config.redisUrl, 'subscriber', log);
      shutdown.add('pub/sub connection', () => subscriber.quit());
      shutdown.add('key revocation subscription', await listenForRevocations(subscriber, api.apiKeys));
      shutdown.add('order waiters subscription', await listenForSettledOrders(subscriber, orderSettledChannel(config.queuePrefix), api.waiters));
      await api.catalog.reload();
      shutdown.add('catalog update subscription', await listenForCatalogUpdates(subscriber, catalogUpdatedChannel(config.queuePrefix), api.catalog));
      const reloadTimer = setInterval(() => void api.catalog.reload(), CATALOG_RELOAD_EVERY_MS);
      reloadTimer.unref();
      shutdown.add('catalog reload timer', async () => clearInterval(reloadTimer));
      app = await buildApp({ config, log, redis, ...api });
      // Registered last so it runs first: stop taking requests, finish the in-flight ones.
      url = await app.listen({ port: config.http.port, host: config.http.host });
      shutdown.add('http', () => app!.close());
      upstream.deliverWebhooksTo?.(`${url}/webhooks/upstream`, webhookSecrets);
    }

    if (!roles.includes('api')) {
      // PORT serves the operations endpoints only: health probes and metrics for this process.
      const ops = await startOpsServer({
        log,
        host: config.http.host,
        port: config.http.port,
        metrics,
        checks: [
          { name: 'database', check: () => pingDatabase(prisma) },
          { name: 'redis', check: () => pingRedis(redis) },
        ],
      });
      shutdown.add('operations listener', () => ops.app.close());
      url = ops.url;
    }

    return { url, upstreamUrl: upstream.url, app, upstream: upstream.client, catalog, prisma, redis, queues, scheduler, shutdown };
  } catch (err) {
    await shutdown.run('start failed').catch(() => undefined);
    throw err;
  }
}
