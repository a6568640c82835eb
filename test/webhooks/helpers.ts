import type { Worker } from 'bullmq';
import type { App } from '../../src/app.js';
import { generateSecret, signedHeaders } from '../../src/platform/standard-webhooks.js';
import { createStandardWebhooksVerifier, startWebhookWorker, type Topic, type WebhookEventRow, type WebhookHandlers } from '../../src/webhooks/index.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { uniqueId } from '../helpers/env.js';

/** Stub handlers that record every call (the real order handlers are tested with the lead's code). */
export interface RecordingHandlers {
  handlers: WebhookHandlers;
  calls: { id: string; topic: Topic }[];
  callsFor(id: string): number;
  /** Makes the next `n` calls throw (to exercise retries). */
  failNext(n: number): void;
}

export function recordingHandlers(): RecordingHandlers {
  const calls: { id: string; topic: Topic }[] = [];
  let failures = 0;
  const handle = (topic: Topic) => async (event: WebhookEventRow) => {
    calls.push({ id: event.id, topic });
    if (failures > 0) {
      failures--;
      throw new Error('handler exploded (test)');
    }
    return { outcome: 'processed' as const };
  };
  return {
    calls,
    callsFor: (id) => calls.filter((c) => c.id === id).length,
    failNext: (n) => (failures = n),
    handlers: { order_status: handle('order_status'), order_created: handle('order_created'), order_final: handle('order_final'), busy_on: handle('busy_on'), busy_off: handle('busy_off') },
  };
}

export interface Receiver {
  ctx: TestContext;
  app: App;
  /** Base URL of the listening app. */
  url: string;
  /** http://…/webhooks/upstream */
  endpoint: string;
  secrets: string[];
  recorder: RecordingHandlers;
  worker: Worker | undefined;
  /** A new event id owned by this test (cleaned up by close). */
  newId(): string;
  /** Signs with `sign` (default: the receiver's first secret) and POSTs over real HTTP. */
  send(body: unknown, opts?: { id?: string; sign?: string[]; timestamp?: number; headers?: Record<string, string | undefined>; rawBody?: string | Buffer }): Promise<{ status: number; body: any; id: string }>;
  row(id: string): Promise<WebhookEventRow | null>;
  /** Waits until the event is no longer `received`. */
  settled(id: string, timeoutMs?: number): Promise<WebhookEventRow>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  secrets?: string[];
  allowedIps?: string[];
  maxBodyBytes?: number;
  toleranceSeconds?: number;
  /** Frozen verifier clock (ms), for the tolerance edges. */
  now?: () => number;
  /** Start the webhook-inbox worker with recording handlers (default true). */
  worker?: boolean;
  env?: Record<string, string>;
}

/** The real app (createApiComponents + buildApp) with the webhook plugin, listening on loopback. */
export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const secrets = options.secrets ?? [generateSecret()];
  const ctx = await createTestContext(options.env);
  const idPrefix = uniqueId('msg_');
  const config = { allowedIps: options.allowedIps, maxBodyBytes: options.maxBodyBytes ?? 65_536, toleranceSeconds: options.toleranceSeconds ?? 300 };
  // The app registers the webhook plugin itself; the test only chooses its options. A frozen
  // clock means a verifier built here (the default one reads Date.now).
  const app = await ctx.app({
    webhooks: {
      prisma: ctx.prisma,
      queues: ctx.queues,
      log: ctx.log,
      secrets,
      config,
      ...(options.now ? { verifier: createStandardWebhooksVerifier({ secrets, toleranceSeconds: config.toleranceSeconds, now: options.now }) } : {}),
    },
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const recorder = recordingHandlers();
  const worker = options.worker === false ? undefined : startWebhookWorker({ queues: ctx.queues, prisma: ctx.prisma, log: ctx.log, handlers: recorder.handlers });
  let n = 0;
  const receiver: Receiver = {
    ctx,
    app,
    url,
    endpoint: `${url}/webhooks/upstream`,
    secrets,
    recorder,
    worker,
    newId: () => `${idPrefix}_${++n}`,
    async send(body, opts = {}) {
      const id = opts.id ?? receiver.newId();
      const raw = opts.rawBody ?? JSON.stringify(body);
      const signed = signedHeaders(opts.sign ?? [secrets[0]!], id, raw.toString(), opts.timestamp);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      for (const [k, v] of Object.entries({ ...signed, ...opts.headers })) if (v !== undefined) headers[k] = v;
      const res = await fetch(receiver.endpoint, { method: 'POST', headers, body: raw });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined, id };
    },
    row: (id) => ctx.prisma.webhookEvent.findUnique({ where: { id } }),
    async settled(id, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const row = await receiver.row(id);
        if (row && row.status !== 'received') return row;
        if (Date.now() > deadline) throw new Error(`webhook ${id} not settled in time (${row?.status ?? 'no row'})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      await worker?.close();
      await ctx.prisma.webhookEvent.deleteMany({ where: { id: { startsWith: idPrefix } } });
      await ctx.close();
    },
  };
  return receiver;
}

/** A body of upstream-webhooks.md. */
export function statusUpdate(status = 'confirmed', extra: Record<string, unknown> = {}) {
  return { type: 'order.status_updated', timestamp: new Date().toISOString(), data: { transaction_id: `TXN-${uniqueId()}`, transaction_number: 1, status, ...extra } };
}
