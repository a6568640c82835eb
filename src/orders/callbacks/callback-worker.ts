import { UnrecoverableError, type Job, type Worker } from 'bullmq';
import { request, type Dispatcher } from 'undici';
import type { PrismaClient } from '../../platform/db.js';
import type { Logger } from '../../platform/logger.js';
import type { QueuePayloads, QueueRegistry } from '../../platform/queues.js';
import { signedHeaders } from '../../platform/standard-webhooks.js';
import { VERSION } from '../../version.js';
import { serializeCallbackPayload } from './callback-payload.js';
import { DEFAULT_BACKOFF, DEFAULT_MAX_ATTEMPTS, callbackRetryDelay, isLastCallbackAttempt, type CallbackBackoff } from './callback-retry.js';

export const CALLBACK_USER_AGENT = `giftcard-gateway-callbacks/${VERSION}`;
export const DEFAULT_CALLBACK_TIMEOUT_MS = 10_000;
const MAX_ERROR_CHARS = 200;

export interface CallbackWorkerDeps {
  queues: QueueRegistry;
  prisma: PrismaClient;
  log: Logger;
  /** `whsec_…`; several (current first) sign each delivery with each, during a rotation. */
  secret: string | string[];
  timeoutMs?: number;
  /** Tests inject one (a local agent, MockAgent); production uses undici's global dispatcher. */
  dispatcher?: Dispatcher;
  /** Attempts per delivery, counted in its row, after which it is marked failed. */
  maxAttempts?: number;
  backoff?: CallbackBackoff;
  concurrency?: number;
}

export type CallbackJobResult = 'delivered' | 'already_done' | 'missing' | 'failed';

/** A failed attempt; carries its number so the back-off follows the row, not a re-created job. */
export class CallbackAttemptError extends Error {
  constructor(
    message: string,
    readonly attempt: number,
  ) {
    super(message);
    this.name = 'CallbackAttemptError';
  }
}

interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
}

function clip(text: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > MAX_ERROR_CHARS ? `${flat.slice(0, MAX_ERROR_CHARS)}…` : flat;
}

async function readSnippet(body: Dispatcher.ResponseData['body']): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
      if (text.length > MAX_ERROR_CHARS) break;
    }
  } catch {
    // The status is what matters; a body that breaks off is not worth another error.
  }
  return text;
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `timeout after ${timeoutMs} ms`;
  }
  return clip(`${e.code ?? e.name ?? 'Error'}: ${e.message ?? String(err)}`);
}

/** One POST. Redirects are not followed (undici's request never does): a 3xx is a failure. */
async function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number, dispatcher: Dispatcher | undefined): Promise<AttemptOutcome> {
  try {
    const res = await request(url, {
      method: 'POST',
      headers,
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
      ...(dispatcher ? { dispatcher } : {}),
    });
    if (res.statusCode >= 200 && res.statusCode < 300) {
      await res.body.dump().catch(() => undefined);
      return { ok: true, status: res.statusCode, error: null };
    }
    const snippet = clip(await readSnippet(res.body));
    return { ok: false, status: res.statusCode, error: clip(`HTTP ${res.statusCode}${snippet ? `: ${snippet}` : ''}`) };
  } catch (err) {
    return { ok: false, status: null, error: describeError(err, timeoutMs) };
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid url)';
  }
}

/**
 * Delivers one outbox row. Idempotent: a delivered or failed row is left alone, so duplicate or
 * re-created jobs cost nothing. Every attempt sends the same bytes under the same webhook-id; only
 * webhook-timestamp and the signature over it change.
 */
export async function deliverCallback(
  deps: Required<Pick<CallbackWorkerDeps, 'prisma' | 'log' | 'timeoutMs' | 'maxAttempts'>> & Pick<CallbackWorkerDeps, 'secret' | 'dispatcher'>,
  job: Pick<Job<QueuePayloads['order-callback']>, 'data' | 'attemptsMade' | 'opts'>,
): Promise<CallbackJobResult> {
  const { prisma, log, timeoutMs, maxAttempts } = deps;
  const { deliveryId } = job.data;
  const row = await prisma.callbackDelivery.findUnique({ where: { id: deliveryId } });
  if (!row) {
    log.warn({ deliveryId }, 'callback delivery not found; job dropped');
    return 'missing';
  }
  if (row.status !== 'pending') return 'already_done';
  const context = { deliveryId, orderId: row.orderId, event: row.event, host: hostOf(row.url) };
  if (row.attempts >= maxAttempts) {
    // A re-created job for a row whose last attempt was recorded but not its failure.
    await prisma.callbackDelivery.updateMany({ where: { id: row.id, status: 'pending' }, data: { status: 'failed' } });
    log.warn({ ...context, attempts: row.attempts }, 'callback gave up');
    return 'failed';
  }

  const body = serializeCallbackPayload(row.payload);
  const secrets = Array.isArray(deps.secret) ? deps.secret : [deps.secret];
  const headers = {
    ...signedHeaders(secrets, row.id, body),
    'content-type': 'application/json',
    'user-agent': CALLBACK_USER_AGENT,
  };
  const attempt = row.attempts + 1;
  const started = performance.now();
  const outcome = await post(row.url, headers, body, timeoutMs, deps.dispatcher);
  const durationMs = Math.round(performance.now() - started);
  const jobAttempts = job.opts.attempts ?? 1;
  const last = !outcome.ok && (isLastCallbackAttempt(attempt, maxAttempts) || job.attemptsMade + 1 >= jobAttempts);
  const status = outcome.ok ? 'delivered' : last ? 'failed' : 'pending';

  await prisma.$transaction([
    prisma.callbackDelivery.update({
      where: { id: row.id },
      data: {
        attempts: { increment: 1 },
        lastStatus: outcome.status,
        lastError: outcome.error,
        status,
        ...(outcome.ok ? { deliveredAt: new Date() } : {}),
      },
    }),
    prisma.orderEvent.create({
      data: {
        orderId: row.orderId,
        kind: 'callback',
        endpoint: row.event,
        ok: outcome.ok,
        durationMs,
        detail: { deliveryId: row.id, attempt, httpStatus: outcome.status, error: outcome.error, result: status },
      },
    }),
  ]);

  if (outcome.ok) {
    log.info({ ...context, attempt, httpStatus: outcome.status, durationMs }, 'callback delivered');
    return 'delivered';
  }
  if (last) {
    log.warn({ ...context, attempt, httpStatus: outcome.status, error: outcome.error }, 'callback failed for good');
    throw new UnrecoverableError(`callback ${deliveryId} failed after ${attempt} attempts: ${outcome.error ?? 'unknown'}`);
  }
  log.info({ ...context, attempt, httpStatus: outcome.status, error: outcome.error, durationMs }, 'callback attempt failed; will retry');
  throw new CallbackAttemptError(`callback attempt ${attempt} failed: ${outcome.error ?? 'unknown'}`, attempt);
}

/** The `order-callback` worker. Jobs come from enqueueCallbackDeliveries (backoff type `custom`). */
export function startCallbackWorker(deps: CallbackWorkerDeps): Worker<QueuePayloads['order-callback'], unknown, string> {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS;
  const maxAttempts = deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoff = deps.backoff ?? DEFAULT_BACKOFF;
  const log = deps.log.child({ worker: 'order-callback' });
  const worker = deps.queues.worker(
    'order-callback',
    (job) => deliverCallback({ prisma: deps.prisma, log, timeoutMs, maxAttempts, secret: deps.secret, dispatcher: deps.dispatcher }, job),
    {
      concurrency: deps.concurrency ?? 10,
      settings: {
        backoffStrategy: (attemptsMade, _type, err) => callbackRetryDelay(err instanceof CallbackAttemptError ? err.attempt : attemptsMade, backoff),
      },
    },
  );
  // An 'error' event without a listener would crash the process (a Redis blip, a lost lock).
  worker.on('error', (err: Error) => log.warn({ err: { message: err.message } }, 'callback worker error'));
  return worker;
}
