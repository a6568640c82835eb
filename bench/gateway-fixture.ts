import { pino } from 'pino';
import { buildApp, type App } from '../src/app.js';
import { createCatalogCache, type CatalogCache } from '../src/catalog/catalog-cache.js';
import { syncCatalog } from '../src/catalog/sync-catalog.js';
import { loadConfig, SANDBOX_DEFAULT_PRIVATE_KEY, SANDBOX_DEFAULT_USERNAME, type Config } from '../src/config/index.js';
import { createPrisma, type PrismaClient } from '../src/platform/db.js';
import { createLogger, type Logger } from '../src/platform/logger.js';
import { migrate } from '../src/platform/migrate.js';
import { createRedis, waitForRedis, type Redis } from '../src/platform/redis.js';
import { createApiKeyService, type ApiKeyService } from '../src/security/api-keys.js';
import { createApiComponents, type ApiComponents } from '../src/api-components.js';
import { createQueueRegistry, type QueueRegistry } from '../src/platform/queues.js';
import { createCardVault } from '../src/security/card-vault.js';
import type { Scope } from '../src/security/scopes.js';
import type { SandboxOptions } from '../src/sandbox/index.js';
import { startSandboxProcess } from './sandbox-process.js';
import { createUpstreamClient, type UpstreamCallRecord, type UpstreamClient } from '../src/upstream/index.js';
import type { BenchEnvironment } from './types.js';

export interface GatewayAppOptions {
  /** Default: the fixture's logger (LOG_LEVEL info, discarded), as in production. */
  log?: Logger;
  /** Default: the fixture's fail-fast producer connection, as `gateway serve` builds it. */
  redis?: Redis;
  /** Extra routes or hooks, registered before the app is ready. */
  configure?: (app: App, fixture: GatewayFixture) => void | Promise<void>;
  /** Components to use instead of the ones createApiComponents builds (e.g. shared order waiters). */
  components?: Partial<ApiComponents>;
  /** `whsec_…` secrets that verify provider webhooks, as `gateway serve` passes them; default none (every delivery refused). */
  webhookSecrets?: readonly string[];
}

export interface GatewayFixtureOptions {
  /** Sandbox options (seed catalog, latency faults…); default: the default catalog, no faults. */
  sandbox?: SandboxOptions;
  /** Extra configuration variables for loadConfig, e.g. DATABASE_POOL_MAX (the fixture's own win). */
  configEnv?: Record<string, string>;
  /** Connections the provider client keeps to the sandbox; default UPSTREAM_CONNECTIONS, as `gateway serve`. */
  upstreamConnections?: number;
  /** The provider client's onCall hook (e.g. a CallRecorder for the order worker). */
  onUpstreamCall?: (call: UpstreamCallRecord) => void;
}

export interface GatewayFixture {
  config: Config;
  prefix: string;
  prisma: PrismaClient;
  redis: Redis;
  log: Logger;
  /** The provider sandbox's base URL (it runs in a process of its own, as a provider would). */
  sandboxUrl: string;
  upstream: UpstreamClient;
  apiKeys: ApiKeyService;
  catalog: CatalogCache;
  /** Queues under `prefix`; close() closes its workers and queues before deleting the keys. */
  queues: QueueRegistry;
  vault: Awaited<ReturnType<typeof createCardVault>>;
  /** Creates an API key (deleted by close()); answers the secret to send as Bearer. */
  key(scopes: Scope[]): Promise<string>;
  /** Builds the real app with `buildApp` and listens on 127.0.0.1, port 0; answers its base URL. */
  startApp(options?: GatewayAppOptions): Promise<{ app: App; url: string; components: ApiComponents }>;
  /** A logger at `level` writing nowhere (log lines are still built, as in production). */
  logger(level: string): Logger;
  close(): Promise<void>;
}

/**
 * The real gateway for benchmarks: its own database (created and migrated here), its own Redis
 * key prefix, the sandbox provider in a process of its own, and the catalog synced from it through the
 * real upstream client. Nothing is mocked; only the host is shared with the load generator.
 */
export async function startGatewayFixture(env: BenchEnvironment, options: GatewayFixtureOptions = {}): Promise<GatewayFixture> {
  const prefix = `bench${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const config = loadConfig({
    NODE_ENV: 'production',
    UPSTREAM_SANDBOX: 'true',
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'info',
    // The highest value the configuration accepts: never reached in a run, but every request
    // still increments its counter in Redis.
    RATE_LIMIT_MAX: '1000000',
    ...options.configEnv,
  });
  // Discarded, but written: serialising log lines is part of what production pays per request.
  const sink = pino.destination({ dest: '/dev/null', sync: true });
  const logger = (level: string) => createLogger(level, sink);
  const log = logger(config.logLevel);

  await migrate(config.databaseUrl);
  const prisma = createPrisma({ url: config.databaseUrl, poolMax: config.databasePoolMax, applicationName: 'gateway:bench' });
  const redis = createRedis(config.redisUrl, 'producer', log);
  const cleanups: (() => Promise<unknown>)[] = [async () => prisma.$disconnect(), async () => redis.quit()];
  const keyIds: string[] = [];
  const apps: App[] = [];
  let queues: QueueRegistry | undefined;

  const close = async () => {
    await Promise.allSettled(apps.map((a) => a.close()));
    // Workers finish their jobs before the keys they use are deleted.
    await queues?.close().catch(() => undefined);
    if (keyIds.length > 0) await prisma.apiKey.deleteMany({ where: { id: { in: keyIds } } }).catch(() => undefined);
    if (redis.status === 'ready') await deleteKeys(redis, `${prefix}:*`).catch(() => undefined);
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };

  try {
    await waitForRedis(redis);
    const sandbox = await startSandboxProcess(options.sandbox ?? {});
    cleanups.push(() => sandbox.close());
    const upstream = createUpstreamClient({
      baseUrl: sandbox.url,
      username: SANDBOX_DEFAULT_USERNAME,
      privateKey: SANDBOX_DEFAULT_PRIVATE_KEY,
      timeoutMs: config.upstream.timeoutMs,
      logger: log,
      // As `gateway serve` sizes it (UPSTREAM_CONNECTIONS), unless a benchmark variant says otherwise.
      connections: options.upstreamConnections ?? config.upstream.connections,
      ...(options.onUpstreamCall ? { onCall: options.onUpstreamCall } : {}),
    });
    cleanups.push(() => upstream.close());
    const sync = await syncCatalog({ prisma, upstream, log, concurrency: config.catalog.syncConcurrency }, 'manual');
    if (sync.outcome !== 'succeeded') throw new Error(`catalog sync ${sync.outcome}: ${JSON.stringify(sync.errors)}`);

    const apiKeys = createApiKeyService({ prisma, log, redis, channel: `${prefix}:api-keys:revoked` });
    const catalog = createCatalogCache({ prisma, log, staleAfterMs: config.catalog.staleAfterMs });
    const registry = createQueueRegistry({ redisUrl: config.redisUrl, producer: redis, prefix });
    queues = registry;
    const vault = await createCardVault([{ id: 'bench', key: new Uint8Array(32).fill(3) }]);
    await catalog.reload();

    const fixture: GatewayFixture = {
      config,
      prefix,
      prisma,
      redis,
      log,
      sandboxUrl: sandbox.url,
      upstream,
      apiKeys,
      catalog,
      queues: registry,
      vault,
      logger,
      close,
      async key(scopes) {
        const { key, summary } = await apiKeys.create(`bench ${prefix}`, scopes);
        keyIds.push(summary.id);
        return key;
      },
      async startApp(appOptions = {}) {
        const appLog = appOptions.log ?? log;
        const appRedis = appOptions.redis ?? redis;
        const components = createApiComponents(
          { config, log: appLog, prisma, redis: appRedis, queues: registry, vault, webhookSecrets: appOptions.webhookSecrets ?? [] },
          { apiKeys, catalog, readinessChecks: [], ...appOptions.components },
        );
        const app = await buildApp({ config, log: appLog, redis: appRedis, ...components });
        apps.push(app);
        await appOptions.configure?.(app, fixture);
        const url = await app.listen({ host: '127.0.0.1', port: 0 });
        return { app, url, components };
      },
    };
    return fixture;
  } catch (err) {
    await close();
    throw err;
  }
}

/** SCAN, not KEYS: the bench may share a Redis with other work. */
async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
