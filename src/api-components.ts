import type { Config } from './config/index.js';
import { createCatalogCache, type CatalogCache } from './catalog/catalog-cache.js';
import { catalogReadiness } from './catalog/catalog-readiness.js';
import { createOrderService, type OrderService } from './orders/order-service.js';
import type { CardDecrypter } from './orders/order-view.js';
import { enqueueOrder } from './orders/order-jobs.js';
import { createSupportActions, type SupportActions } from './orders/support-actions.js';
import { createTerminalHooks } from './orders/terminal-hooks.js';
import type { CardVault } from './security/card-vault.js';
import type { WebhookPluginOptions } from './webhooks/index.js';
import { createMetrics, type Metrics } from './platform/metrics.js';
import { createSupportService, type SupportService } from './support/support-service.js';
import { createOrderWaiters, type OrderWaiters } from './orders/order-waiters.js';
import { pingDatabase, type PrismaClient } from './platform/db.js';
import { ReadinessFailure, type ReadinessCheck } from './platform/http/health-routes.js';
import { createBusyMode, type BusyMode } from './orders/busy-mode.js';
import type { Logger } from './platform/logger.js';
import type { QueueRegistry } from './platform/queues.js';
import { pingRedis, type Redis } from './platform/redis.js';
import { createApiKeyService, type ApiKeyService } from './security/api-keys.js';

/** Everything the HTTP API serves from, built one way for `serve`, the tests and the benchmarks. */
export interface ApiComponents {
  apiKeys: ApiKeyService;
  catalog: CatalogCache;
  orders: OrderService;
  waiters: OrderWaiters;
  vault: CardDecrypter;
  support: SupportService;
  supportActions: SupportActions;
  metrics: Metrics;
  /** The provider webhook receiver and its support routes. */
  webhooks: WebhookPluginOptions;
  /** Provider busy mode, shared with the pipeline when both run in one process. */
  busy: BusyMode;
  readinessChecks: ReadinessCheck[];
}

/**
 * Provider busy mode in /readyz: not critical (orders are still accepted and held), but seen.
 */
function busyReadiness(busy: BusyMode): ReadinessCheck {
  return {
    name: 'provider_busy_mode',
    critical: false,
    check: async () => {
      const state = await busy.current();
      const details = { active: state.active, reason: state.reason, until: state.until?.toISOString() ?? null };
      if (state.active) throw new ReadinessFailure('busy', details);
      return details;
    },
  };
}

export interface ApiPlatform {
  config: Config;
  log: Logger;
  prisma: PrismaClient;
  /** Fail-fast connection: rate limits, publishing, queue adds. */
  redis: Redis;
  queues: QueueRegistry;
  vault: CardVault;
  /** Secrets that verify provider webhooks (empty: every delivery is refused). */
  webhookSecrets?: readonly string[];
}

export function createApiComponents(platform: ApiPlatform, overrides: Partial<ApiComponents> = {}): ApiComponents {
  const { config, log, prisma, redis, queues, vault, webhookSecrets = [] } = platform;
  const apiKeys = overrides.apiKeys ?? createApiKeyService({ prisma, log, redis, channel: `${config.queuePrefix}:api-keys:revoked` });
  const catalog = overrides.catalog ?? createCatalogCache({ prisma, log, staleAfterMs: config.catalog.staleAfterMs });
  const busy = overrides.busy ?? createBusyMode({ prisma });
  return {
    busy,
    metrics:
      overrides.metrics ??
      createMetrics({ prisma, queues, catalogAgeSeconds: () => (catalog.ageMs() === undefined ? undefined : catalog.ageMs()! / 1000), busyActive: async () => (await busy.current()).active }),
    webhooks: overrides.webhooks ?? { prisma, queues, log, secrets: webhookSecrets, config: config.webhooks },
    support: overrides.support ?? createSupportService({ prisma, vault, queues }),
    supportActions:
      overrides.supportActions ??
      createSupportActions({ prisma, vault, terminal: createTerminalHooks({ queues, publisher: redis, log }), enqueue: (orderId) => enqueueOrder(queues, orderId), log }),
    apiKeys,
    catalog,
    orders: overrides.orders ?? createOrderService({ prisma, catalog, queues, log }),
    waiters: overrides.waiters ?? createOrderWaiters(),
    vault: overrides.vault ?? vault,
    readinessChecks: overrides.readinessChecks ?? [
      { name: 'database', check: () => pingDatabase(prisma) },
      { name: 'redis', check: () => pingRedis(redis) },
      catalogReadiness(catalog),
      busyReadiness(busy),
    ],
  };
}
