import { Writable } from 'node:stream';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createPrisma, pingDatabase, type PrismaClient } from '../../src/platform/db.js';
import type { ReadinessCheck } from '../../src/platform/http/health-routes.js';
import { createLogger, type Logger } from '../../src/platform/logger.js';
import { createRedis, pingRedis, waitForRedis, type Redis } from '../../src/platform/redis.js';
import { createApiKeyService, type ApiKeyService } from '../../src/security/api-keys.js';
import { createCatalogCache, type CatalogCache } from '../../src/catalog/catalog-cache.js';
import type { Scope } from '../../src/security/scopes.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueId } from './env.js';

/** Collects every log line written, so tests can assert what was (not) logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

export interface TestContext {
  config: Config;
  prisma: PrismaClient;
  redis: Redis;
  log: Logger;
  logs: LogCapture;
  prefix: string;
  apiKeys: ApiKeyService;
  /** Builds the real app on the real database and Redis, with this test's own key prefix. */
  app(overrides?: { readinessChecks?: ReadinessCheck[]; apiKeys?: ApiKeyService; catalog?: CatalogCache; configure?: (app: App) => void | Promise<void> }): Promise<App>;
  /** Creates an API key with these scopes; cleaned up by close(). */
  key(scopes: Scope[], name?: string): Promise<string>;
  close(): Promise<void>;
}

export async function createTestContext(env: Record<string, string> = {}): Promise<TestContext> {
  const prefix = uniqueId('test');
  const config = loadConfig({ DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, LOG_LEVEL: 'info', ...env });
  const logs = new LogCapture();
  const log = createLogger('debug', logs);
  const prisma = createPrisma({ url: config.databaseUrl, poolMax: 4, applicationName: 'gateway:test' });
  const redis = createRedis(config.redisUrl, 'producer', log);
  await waitForRedis(redis);
  const apiKeys = createApiKeyService({ prisma, log, redis, channel: `${prefix}:api-keys:revoked` });
  const keyIds: string[] = [];
  const apps: App[] = [];
  return {
    config,
    prisma,
    redis,
    log,
    logs,
    prefix,
    apiKeys,
    async app(overrides = {}) {
      const readinessChecks = overrides.readinessChecks ?? [
        { name: 'database', check: () => pingDatabase(prisma) },
        { name: 'redis', check: () => pingRedis(redis) },
      ];
      const catalog = overrides.catalog ?? createCatalogCache({ prisma, log, staleAfterMs: config.catalog.staleAfterMs });
      const app = await buildApp({ config, log, redis, apiKeys: overrides.apiKeys ?? apiKeys, catalog, readinessChecks });
      await overrides.configure?.(app);
      await app.ready();
      apps.push(app);
      return app;
    },
    async key(scopes, name = prefix) {
      const { key, summary } = await apiKeys.create(name, scopes);
      keyIds.push(summary.id);
      return key;
    },
    async close() {
      await Promise.all(apps.map((a) => a.close()));
      if (keyIds.length > 0) await prisma.apiKey.deleteMany({ where: { id: { in: keyIds } } });
      const stale = await redis.keys(`${prefix}:*`);
      if (stale.length > 0) await redis.del(...stale);
      await redis.quit();
      await prisma.$disconnect();
    },
  };
}
