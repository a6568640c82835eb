import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PrismaClient } from './db.js';
import type { QueueRegistry } from './queues.js';
import { QUEUE_NAMES } from './queues.js';

/**
 * Prometheus metrics (GET /metrics). Counters and histograms are updated as things happen
 * (provider calls, webhook deliveries); state that lives in PostgreSQL or Redis (orders by status,
 * queue depth and age, catalog age, busy mode) is read when Prometheus scrapes, so every instance
 * reports the same truth and nothing drifts.
 */
export interface MetricsSources {
  prisma: PrismaClient;
  queues: QueueRegistry;
  /** Seconds since the last successful catalog sync, or undefined when never synced. */
  catalogAgeSeconds: () => number | undefined;
  busyActive: () => Promise<boolean>;
}

const WEBHOOK_OUTCOMES: Record<number, string> = { 204: 'accepted', 400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 413: 'too_large', 415: 'bad_request' };

export function createMetrics(sources?: MetricsSources) {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'gateway' });
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });

  const providerCalls = new Counter({
    name: 'gateway_provider_calls_total',
    help: 'Provider HTTP attempts by endpoint and outcome code (11111 success, provider error codes, or the failure kind).',
    labelNames: ['endpoint', 'code'] as const,
    registers: [registry],
  });
  const providerLatency = new Histogram({
    name: 'gateway_provider_call_seconds',
    help: 'Duration of provider HTTP attempts.',
    labelNames: ['endpoint'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: 'gateway_webhook_deliveries_total',
    help: 'Provider webhook deliveries by the answer given (accepted, unauthorized, bad_request, too_large, forbidden).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  if (sources) {
    new Gauge({
      name: 'gateway_orders',
      help: 'Orders by status.',
      labelNames: ['status'] as const,
      registers: [registry],
      async collect() {
        const rows = await sources.prisma.order.groupBy({ by: ['status'], _count: { _all: true } });
        this.reset();
        for (const r of rows) this.set({ status: r.status }, r._count._all);
      },
    });
    new Gauge({
      name: 'gateway_orders_needs_attention_oldest_seconds',
      help: 'Age of the oldest order waiting for support (0 when none).',
      registers: [registry],
      async collect() {
        const oldest = await sources.prisma.order.findFirst({ where: { status: 'needs_attention' }, orderBy: { updatedAt: 'asc' }, select: { updatedAt: true } });
        this.set(oldest ? (Date.now() - oldest.updatedAt.getTime()) / 1000 : 0);
      },
    });
    new Gauge({
      name: 'gateway_queue_jobs',
      help: 'BullMQ jobs by queue and state.',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const name of QUEUE_NAMES) {
          const counts = await sources.queues.get(name).getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
          for (const [state, n] of Object.entries(counts)) this.set({ queue: name, state }, n);
        }
      },
    });
    new Gauge({
      name: 'gateway_queue_oldest_waiting_seconds',
      help: 'Age of the oldest job waiting to run, by queue (0 when none).',
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        for (const name of QUEUE_NAMES) {
          const [oldest] = await sources.queues.get(name).getJobs(['waiting'], 0, 0, true);
          this.set({ queue: name }, oldest ? (Date.now() - oldest.timestamp) / 1000 : 0);
        }
      },
    });
    new Gauge({
      name: 'gateway_catalog_age_seconds',
      help: 'Seconds since the last successful catalog sync (-1 when never synced).',
      registers: [registry],
      collect() {
        this.set(sources.catalogAgeSeconds() ?? -1);
      },
    });
    new Gauge({
      name: 'gateway_provider_busy',
      help: '1 while the provider is in busy mode.',
      registers: [registry],
      async collect() {
        this.set((await sources.busyActive()) ? 1 : 0);
      },
    });
    new Gauge({
      name: 'gateway_webhook_events',
      help: 'Stored provider webhook events by status, and flagged ones.',
      labelNames: ['status'] as const,
      registers: [registry],
      async collect() {
        const rows = await sources.prisma.webhookEvent.groupBy({ by: ['status'], _count: { _all: true } });
        this.reset();
        for (const r of rows) this.set({ status: r.status }, r._count._all);
        this.set({ status: 'flagged' }, await sources.prisma.webhookEvent.count({ where: { flagged: true } }));
      },
    });
  }

  return {
    registry,
    /** The provider client's onCall hook. */
    recordProviderCall(call: { endpoint: string; ok: boolean; upstreamCode: number | undefined; errorKind: string | undefined; durationMs: number }): void {
      const code = call.upstreamCode !== undefined ? String(call.upstreamCode) : (call.errorKind ?? (call.ok ? '11111' : 'unknown'));
      providerCalls.inc({ endpoint: call.endpoint, code });
      providerLatency.observe({ endpoint: call.endpoint }, call.durationMs / 1000);
    },
    /** Provider webhook answers, by what the receiver answered. */
    recordWebhook(httpStatus: number): void {
      webhookDeliveries.inc({ outcome: WEBHOOK_OUTCOMES[httpStatus] ?? `http_${httpStatus}` });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
