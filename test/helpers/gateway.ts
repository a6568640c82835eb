import type { Worker } from 'bullmq';
import type { App } from '../../src/app.js';
import { syncCatalog } from '../../src/catalog/sync-catalog.js';
import { createBusyMode, type BusyMode } from '../../src/orders/busy-mode.js';
import { startOrderWorker } from '../../src/orders/order-jobs.js';
import type { OrderPolicy } from '../../src/orders/order-policy.js';
import { createOrderStore } from '../../src/orders/order-store.js';
import { createTerminalHooks } from '../../src/orders/terminal-hooks.js';
import { createOrderWaiters, listenForSettledOrders, orderSettledChannel } from '../../src/orders/order-waiters.js';
import { createCatalogCache } from '../../src/catalog/catalog-cache.js';
import { createMetrics } from '../../src/platform/metrics.js';
import { createRedis } from '../../src/platform/redis.js';
import type { SandboxOptions } from '../../src/sandbox/index.js';
import { SANDBOX_DEFAULT_PRIVATE_KEY, SANDBOX_DEFAULT_USERNAME } from '../../src/config/index.js';
import { createUpstreamClient, type UpstreamCallRecord, type UpstreamClient } from '../../src/upstream/index.js';
import type { Scope } from '../../src/security/scopes.js';
import { createTestContext, type TestContext } from './context.js';
import { createIsolatedDatabase } from './database.js';
import { seed, startSandbox, type SandboxWithClient } from './sandbox.js';

export const TEST_CATALOG = seed([
  { id: 'V-1', name: 'Google Play', nameAr: 'جوجل بلاي', cards: [{ id: '301', amount: '0.10', stock: 1000 }, { id: '302', amount: '24.75', stock: 40 }] },
  { id: '2', name: 'PSN', cards: [{ id: '201', amount: '20.50', stock: 25 }, { id: '202', amount: '15', stock: 2 }] },
]);

/** Fast retries, so failure paths finish in milliseconds. */
export const FAST_POLICY: OrderPolicy = {
  maxBalanceChecks: 3,
  maxInitiateAttempts: 2,
  maxConfirmAttempts: 3,
  retryBaseMs: 20,
  retryMaxMs: 50,
  busyRecheckMs: 100,
};

export interface TestGateway {
  ctx: TestContext;
  app: App;
  sandbox: SandboxWithClient;
  upstream: UpstreamClient;
  busy: BusyMode;
  worker: Worker;
  key(scopes?: Scope[]): Promise<string>;
  /** POST /v1/orders; returns the parsed answer and status. */
  order(key: string, body: Record<string, unknown>, options?: { idempotencyKey?: string; prefer?: string }): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  /** Waits until the order is settled (fulfilled, failed or needs_attention) and returns it via the API. */
  settled(key: string, orderId: string, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

/**
 * A whole gateway in one process: an isolated database with a synced catalog, the sandbox over
 * real HTTP, real Redis queues with this test's prefix, the order worker and the HTTP app.
 */
export async function startTestGateway(options: { sandbox?: SandboxOptions; policy?: OrderPolicy; workerConcurrency?: number } = {}): Promise<TestGateway> {
  const db = await createIsolatedDatabase();
  const ctx = await createTestContext({ DATABASE_URL: db.url });
  const sandbox = await startSandbox({ catalog: TEST_CATALOG, ...options.sandbox });
  let metricsHook: (call: UpstreamCallRecord) => void = () => undefined;
  const upstream = createUpstreamClient({
    baseUrl: sandbox.url,
    username: options.sandbox?.username ?? SANDBOX_DEFAULT_USERNAME,
    privateKey: options.sandbox?.privateKey ?? SANDBOX_DEFAULT_PRIVATE_KEY,
    timeoutMs: 2_000,
    logger: ctx.log,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    onCall: (call) => metricsHook(call),
  });
  await syncCatalog({ prisma: ctx.prisma, upstream, log: ctx.log }, 'manual');

  const busy = createBusyMode({ prisma: ctx.prisma, cacheMs: 0 });
  const worker = startOrderWorker({
    queues: ctx.queues,
    log: ctx.log,
    concurrency: options.workerConcurrency ?? 20,
    deps: {
      store: createOrderStore(ctx.prisma, `test-worker-${ctx.prefix}`, 30_000),
      upstream,
      vault: ctx.vault,
      busy,
      terminal: createTerminalHooks({ queues: ctx.queues, publisher: ctx.redis, log: ctx.log }),
      log: ctx.log,
      policy: options.policy ?? FAST_POLICY,
    },
  });
  const catalog = createCatalogCache({ prisma: ctx.prisma, log: ctx.log, staleAfterMs: ctx.config.catalog.staleAfterMs });
  await catalog.reload();
  const waiters = createOrderWaiters();
  const subscriber = createRedis(ctx.config.redisUrl, 'subscriber');
  const stopListening = await listenForSettledOrders(subscriber, orderSettledChannel(ctx.prefix), waiters);
  const metrics = createMetrics({
    prisma: ctx.prisma,
    queues: ctx.queues,
    catalogAgeSeconds: () => (catalog.ageMs() === undefined ? undefined : catalog.ageMs()! / 1000),
    busyActive: async () => (await busy.current()).active,
  });
  metricsHook = (call) => metrics.recordProviderCall(call);
  const app = await ctx.app({ catalog, waiters, busy, metrics });

  const gateway: TestGateway = {
    ctx,
    app,
    sandbox,
    upstream,
    busy,
    worker,
    key: (scopes = ['orders:write', 'orders:read', 'catalog:read']) => ctx.key(scopes),
    async order(key, body, opts = {}) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/orders',
        headers: {
          authorization: `Bearer ${key}`,
          'idempotency-key': opts.idempotencyKey ?? `idem-${Math.random().toString(36).slice(2)}`,
          ...(opts.prefer ? { prefer: opts.prefer } : {}),
        },
        payload: body,
      });
      return { status: res.statusCode, body: res.json(), headers: res.headers };
    },
    async settled(key, orderId, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await app.inject({ method: 'GET', url: `/v1/orders/${orderId}`, headers: { authorization: `Bearer ${key}` } });
        const order = res.json();
        if (['fulfilled', 'failed', 'needs_attention'].includes(order.status)) return order;
        if (Date.now() > deadline) throw new Error(`order ${orderId} not settled in time: ${order.status} (${order.statusDetail})`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      await stopListening();
      await subscriber.quit();
      await worker.close();
      await ctx.close();
      await upstream.close();
      await sandbox.close();
      await db.drop();
    },
  };
  return gateway;
}
