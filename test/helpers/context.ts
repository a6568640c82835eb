import { Writable } from 'node:stream';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createPrisma, type PrismaClient } from '../../src/platform/db.js';
import { createLogger, type Logger } from '../../src/platform/logger.js';
import { createRedis, waitForRedis, type Redis } from '../../src/platform/redis.js';
import { createQueueRegistry, type QueueRegistry } from '../../src/platform/queues.js';
import { createCardVault, type CardVault } from '../../src/security/card-vault.js';
import { createApiComponents, type ApiComponents } from '../../src/api-components.js';
import { createApiKeyService, type ApiKeyService } from '../../src/security/api-keys.js';
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

/** A fixed card-code key for tests (never a real one). */
export const TEST_CARD_CODE_KEYS = [{ id: 'test1', key: new Uint8Array(32).fill(7) }];

export interface TestContext {
  config: Config;
  prisma: PrismaClient;
  redis: Redis;
  log: Logger;
  logs: LogCapture;
  prefix: string;
  apiKeys: ApiKeyService;
  /** Builds the real app on the real database and Redis, with this test's own key prefix. */
  queues: QueueRegistry;
  vault: CardVault;
  /** Builds the real app (createApiComponents, as `serve` does), with optional replacements. */
  app(overrides?: Partial<ApiComponents> & { configure?: (app: App) => void | Promise<void> }): Promise<App>;
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
  const queues = createQueueRegistry({ redisUrl: config.redisUrl, producer: redis, prefix });
  const vault = await createCardVault(TEST_CARD_CODE_KEYS);
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
    queues,
    vault,
    async app({ configure, ...overrides } = {}) {
      const components = createApiComponents({ config, log, prisma, redis, queues, vault }, { apiKeys, ...overrides });
      const app = await buildApp({ config, log, redis, ...components });
      await configure?.(app);
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
      await queues.close();
      if (keyIds.length > 0) await prisma.apiKey.deleteMany({ where: { id: { in: keyIds } } });
      const stale = await redis.keys(`${prefix}:*`);
      if (stale.length > 0) await redis.del(...stale);
      await redis.quit();
      await prisma.$disconnect();
    },
  };
}
