import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { decodeSecret, signedHeaders } from '../platform/standard-webhooks.js';

/**
 * Sends the provider's webhooks (upstream-webhooks.md) as signed Standard Webhooks, with bounded
 * retries, and keeps every event and attempt for inspection. Each event's body is serialised once:
 * redeliveries and duplicates carry the same `webhook-id` and the same bytes, re-signed with a
 * fresh `webhook-timestamp` as a real sender would. Nothing here ever holds card codes: payloads
 * are built by the caller from reservation fields only.
 */

export type WebhookType = 'order.created' | 'order.status_updated' | 'order.finalized' | 'busy_mode.activated' | 'busy_mode.revoked';

export type DeliveryKind = 'initial' | 'retry' | 'redeliver' | 'duplicate' | 'release';

export interface DeliveryAttempt {
  kind: DeliveryKind;
  /** Wall-clock ms (not the sandbox clock: this is transport, measured in real time). */
  at: number;
  httpStatus: number | null;
  ok: boolean;
  error?: string;
  durationMs: number;
}

export interface WebhookEventRecord {
  id: string;
  type: WebhookType;
  body: string;
  /** `held` until released; `no_endpoint` when no URL is configured; otherwise the last outcome. */
  state: 'held' | 'no_endpoint' | 'sending' | 'delivered' | 'failed';
  attempts: DeliveryAttempt[];
}

export interface WebhookSettings {
  url?: string;
  secrets: string[];
  /** Delays between retries of one delivery; its length bounds the retries. */
  retryDelaysMs: number[];
  timeoutMs: number;
  /** Hold new events instead of sending them (release them later in any order). */
  hold: boolean;
}

export const DEFAULT_RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000];
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;

export type ReleaseOrder = 'fifo' | 'reverse' | 'shuffle';

export class WebhookDispatcher {
  private readonly events: WebhookEventRecord[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private abort = new AbortController();
  private settings: WebhookSettings;

  constructor(
    settings: Partial<WebhookSettings>,
    private readonly deps: { now: () => number; logger: Logger; onAttempt: (event: WebhookEventRecord, attempt: DeliveryAttempt) => void; random: () => number },
  ) {
    this.settings = completeSettings(settings);
  }

  configure(patch: Partial<WebhookSettings>): WebhookSettings {
    this.settings = completeSettings({ ...this.settings, ...patch });
    return this.view();
  }

  /** Settings without the secrets, which never leave the process. */
  view(): WebhookSettings {
    return { ...this.settings, secrets: this.settings.secrets.map(() => '[redacted]') };
  }

  list(): WebhookEventRecord[] {
    return this.events;
  }

  get(id: string): WebhookEventRecord | undefined {
    return this.events.find((e) => e.id === id);
  }

  publish(type: WebhookType, data: Record<string, unknown>): WebhookEventRecord {
    const id = `msg_${randomUUID().replace(/-/g, '')}`;
    const body = JSON.stringify({ type, timestamp: new Date(this.deps.now()).toISOString(), data });
    const event: WebhookEventRecord = { id, type, body, state: 'no_endpoint', attempts: [] };
    this.events.push(event);
    if (!this.settings.url) return event;
    if (this.settings.hold) {
      event.state = 'held';
      return event;
    }
    this.track(this.deliver(event, 'initial'));
    return event;
  }

  /** Sends an event again with the same webhook-id (as the provider's own retry would). */
  redeliver(id: string): boolean {
    const event = this.get(id);
    if (!event || !this.settings.url) return false;
    this.track(this.deliver(event, 'redeliver'));
    return true;
  }

  /** Sends `count` simultaneous copies of an event: at-least-once delivery's worst day. */
  duplicate(id: string, count: number): boolean {
    const event = this.get(id);
    if (!event || !this.settings.url) return false;
    for (let i = 0; i < count; i++) this.track(this.deliver(event, 'duplicate'));
    return true;
  }

  /** Sends held events one after another in the given order; resolves when all got a first answer. */
  async release(order: ReleaseOrder): Promise<string[]> {
    const held = this.events.filter((e) => e.state === 'held');
    const ordered = order === 'reverse' ? [...held].reverse() : order === 'shuffle' ? shuffle(held, this.deps.random) : held;
    for (const event of ordered) event.state = 'sending';
    for (const event of ordered) {
      // Sequential first attempts so the receiver sees exactly this order; retries run on their own.
      await this.attemptOnce(event, 'release').then((ok) => {
        if (!ok) this.track(this.retry(event, 0));
      });
    }
    return ordered.map((e) => e.id);
  }

  /** Resolves when no delivery (including scheduled retries) is in progress. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Forgets every event and cancels every delivery (reset). */
  clear(): void {
    this.abort.abort();
    this.abort = new AbortController();
    this.events.length = 0;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled([...this.inFlight]);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async deliver(event: WebhookEventRecord, kind: DeliveryKind): Promise<void> {
    event.state = 'sending';
    if (await this.attemptOnce(event, kind)) return;
    await this.retry(event, 0);
  }

  private async retry(event: WebhookEventRecord, from: number): Promise<void> {
    const signal = this.abort.signal;
    for (let i = from; i < this.settings.retryDelaysMs.length; i++) {
      try {
        await sleep(this.settings.retryDelaysMs[i], undefined, { signal, ref: false });
      } catch {
        return; // closed or reset
      }
      if (await this.attemptOnce(event, 'retry')) return;
    }
  }

  private async attemptOnce(event: WebhookEventRecord, kind: DeliveryKind): Promise<boolean> {
    const { url, secrets, timeoutMs } = this.settings;
    if (!url || this.abort.signal.aborted) return true;
    const started = Date.now();
    const attempt: DeliveryAttempt = { kind, at: started, httpStatus: null, ok: false, durationMs: 0 };
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signedHeaders(secrets, event.id, event.body) },
        body: event.body,
        signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(timeoutMs)]),
      });
      await res.arrayBuffer().catch(() => undefined);
      attempt.httpStatus = res.status;
      attempt.ok = res.status >= 200 && res.status < 300;
    } catch (err) {
      attempt.error = err instanceof Error ? err.name === 'TimeoutError' ? 'timeout' : err.message : String(err);
    }
    attempt.durationMs = Date.now() - started;
    event.attempts.push(attempt);
    event.state = attempt.ok ? 'delivered' : 'failed';
    this.deps.logger.debug({ webhookId: event.id, type: event.type, kind, httpStatus: attempt.httpStatus, ok: attempt.ok }, 'sandbox webhook attempt');
    this.deps.onAttempt(event, attempt);
    return attempt.ok;
  }
}

function completeSettings(s: Partial<WebhookSettings>): WebhookSettings {
  const secrets = s.secrets ?? [];
  for (const secret of secrets) decodeSecret(secret); // fail at configuration, not at first send
  if (s.url && secrets.length === 0) throw new Error('a webhook URL needs at least one whsec_ secret');
  return {
    url: s.url,
    secrets,
    retryDelaysMs: s.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    timeoutMs: s.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    hold: s.hold ?? false,
  };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
