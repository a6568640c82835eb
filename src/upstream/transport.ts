import { Agent, ProxyAgent, request, type Dispatcher } from 'undici';
import type { UpstreamEndpoint } from './endpoints.js';
import { UpstreamError } from './errors.js';

/** Larger answers are refused: the biggest legitimate one (a vendor's denominations) is tiny. */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export interface DispatcherSettings {
  timeoutMs: number;
  connections: number;
  proxyUrl?: string;
}

/**
 * A pooled keep-alive dispatcher. Idle sockets are dropped after 4 s, below the common 5 s server
 * default, so we rarely write a request onto a socket the server is closing: for a write that
 * race surfaces as "connection lost after sending", an unknown outcome we would rather not cause.
 * undici also honours a shorter Keep-Alive hint from the server (minus the 1 s threshold).
 */
export function createDispatcher(settings: DispatcherSettings): Dispatcher {
  const options: Agent.Options = {
    connections: settings.connections,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
    keepAliveTimeoutThreshold: 1_000,
    connect: { timeout: settings.timeoutMs },
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
  };
  return settings.proxyUrl ? new ProxyAgent({ uri: settings.proxyUrl, ...options }) : new Agent(options);
}

export interface TransportRequest {
  endpoint: UpstreamEndpoint;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

export interface TransportResponse {
  status: number;
  text: string;
}

/**
 * Error codes raised before a request's bytes can have been written: failing to resolve, reach,
 * connect to or handshake with the host. Only these prove the provider never saw the request;
 * every other failure (reset, close, headers/body timeout) may come after the provider acted.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  // Dispatching on a closed pool fails before any socket is used.
  'UND_ERR_CLOSED',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

export async function send(dispatcher: Dispatcher, req: TransportRequest, timeoutMs: number): Promise<TransportResponse> {
  let status: number | undefined;
  try {
    const res = await request(req.url, {
      dispatcher,
      method: req.method,
      headers: req.headers,
      body: req.body,
      // Also set per request, so an injected dispatcher gets the same limits.
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = res.statusCode;
    const text = await readCapped(res.body, req.endpoint, status);
    return { status, text };
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    throw transportError(error, req.endpoint, status);
  }
}

async function readCapped(body: Dispatcher.ResponseData['body'], endpoint: UpstreamEndpoint, status: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      throw new UpstreamError({ kind: 'malformed', endpoint, httpStatus: status, requestSent: true, detail: 'response too large' });
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Maps an undici/Node failure to a typed error; the message carries the error code only. */
export function transportError(error: unknown, endpoint: UpstreamEndpoint, httpStatus?: number): UpstreamError {
  const code = errorCode(error);
  const kind = code !== undefined && TIMEOUT_CODES.has(code) ? 'timeout' : 'network';
  const requestSent = httpStatus !== undefined || code === undefined || !NOT_SENT_CODES.has(code);
  return new UpstreamError({ kind, endpoint, httpStatus, requestSent, detail: code ?? 'unknown transport failure', cause: error });
}

/** Wrapper codes that say less than a code further down the cause chain (e.g. ECONNRESET). */
const GENERIC_CODES: ReadonlySet<string> = new Set(['UND_ERR_SOCKET', 'UND_ERR']);

function errorCode(error: unknown): string | undefined {
  let fallback: string | undefined;
  let e: unknown = error;
  for (let depth = 0; typeof e === 'object' && e !== null && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (!GENERIC_CODES.has(code)) return code;
      fallback ??= code;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return fallback;
}
