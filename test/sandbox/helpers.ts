import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

/** Starts a sandbox on an ephemeral loopback port; the caller closes it (see `useSandbox`). */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await createSandbox(options);
  await sandbox.listen({ port: 0, host: '127.0.0.1' });
  return sandbox;
}

export interface ProviderAnswer {
  status: number;
  json: Record<string, unknown>;
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  /** Sent verbatim (for money literals and malformed bodies). */
  rawBody?: string;
  token?: string;
  bearer?: boolean;
  /** Default: a Token header with a fixed literal, as the spec shows. */
  tokenHeader?: string | null;
  contentType?: string | null;
}

/** One provider call over real HTTP. */
export async function call(baseUrl: string, endpoint: string, opts: CallOptions = {}): Promise<ProviderAnswer> {
  const headers: Record<string, string> = {};
  if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
  if (opts.tokenHeader !== null) headers.token = opts.tokenHeader ?? 'merchant-token';
  if (opts.token !== undefined) headers.authorization = opts.bearer === false ? opts.token : `Bearer ${opts.token}`;
  const method = opts.method ?? (endpoint === 'get-card-list' ? 'GET' : 'POST');
  const body = opts.rawBody ?? (opts.body === undefined ? (method === 'GET' ? undefined : '{}') : JSON.stringify(opts.body));
  const res = await fetch(`${baseUrl}/api-service/card/${endpoint}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

export async function login(sandbox: Sandbox): Promise<string> {
  const res = await call(sandbox.url, 'login', { body: { user_name: 'sandbox-merchant', password: 'sandbox-private-key-not-secret' } });
  if (res.json.status !== true) throw new Error(`login failed: ${JSON.stringify(res.json)}`);
  return res.json.token as string;
}

/** initiate-card-request with the spec's `quantiry` key; returns the answer. */
export function initiate(sandbox: Sandbox, token: string, cardId: string | number, quantiry: number, transactionNumber = 1): Promise<ProviderAnswer> {
  return call(sandbox.url, 'initiate-card-request', { token, body: { card_id: cardId, quantiry, transaction_number: transactionNumber } });
}

export async function control<T = Record<string, unknown>>(sandbox: Sandbox, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${sandbox.controlUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as T };
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
}

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** Status to answer for the nth delivery (0-based); default 204. */
  respond: (index: number) => number;
  /** Milliseconds to wait before answering the nth delivery; default 0. */
  delay: (index: number) => number;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A small local webhook receiver recording every delivery. */
export async function startReceiver(): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const receiver: Partial<Receiver> = { received, respond: () => 204, delay: () => 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const index = received.length;
      received.push({ headers: req.headers, rawBody, body: JSON.parse(rawBody) as ReceivedWebhook['body'] });
      const answer = (): void => {
        res.statusCode = receiver.respond!(index);
        res.end();
      };
      const wait = receiver.delay!(index);
      if (wait > 0) setTimeout(answer, wait).unref();
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.waitFor = async (count, timeoutMs = 5_000) => {
    const deadline = Date.now() + timeoutMs;
    while (received.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} webhooks, got ${received.length}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return received;
  };
  receiver.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return receiver as Receiver;
}

export const WEBHOOK_SECRET = `whsec_${Buffer.from('sandbox-test-webhook-secret-32by').toString('base64')}`;
