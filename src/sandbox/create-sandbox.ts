import { setMaxListeners } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { SANDBOX_DEFAULT_PRIVATE_KEY, SANDBOX_DEFAULT_USERNAME } from '../config/index.js';
import { LOOPBACK_IPS } from './access.js';
import { DEFAULT_MAX_CALLS } from './call-log.js';
import { loadCatalogSeed, type SandboxCatalogSeed } from './catalog.js';
import { CONTROL_PREFIX, controlRoutes } from './control-routes.js';
import { SandboxControl } from './control-service.js';
import { SandboxEvents } from './events.js';
import { completeFaults } from './faults.js';
import { ProviderService } from './provider-service.js';
import { providerRoutes } from './provider-routes.js';
import { SandboxState } from './state.js';
import type { BehaviourSettings, FaultSettings } from './types.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';

export interface SandboxOptions {
  /** Defaults SANDBOX_DEFAULT_USERNAME / SANDBOX_DEFAULT_PRIVATE_KEY. */
  username?: string;
  privateKey?: string;
  /** '' (Development shape) or e.g. '/production770' (Production shape). */
  basePath?: string;
  /** Object or JSON file path; default config/sandbox-catalog.json. */
  catalog?: SandboxCatalogSeed | string;
  /** Session token lifetime; default 1 hour. */
  tokenTtlMs?: number;
  /** How long a pending reservation holds its stock; default 15 minutes. */
  reservationTtlMs?: number;
  /** Provider API callers allowed; default loopback. */
  allowedIps?: string[];
  /** Control API callers allowed; default loopback. 'any' only on an isolated network. */
  controlAllowedIps?: string[] | 'any';
  webhook?: { url?: string; secrets: string[]; retryDelaysMs?: number[]; timeoutMs?: number; hold?: boolean };
  faults?: Partial<FaultSettings>;
  /** Provider behaviours the spec leaves open; see docs/sandbox.md. */
  behaviour?: Partial<Omit<BehaviourSettings, 'tokenTtlMs' | 'reservationTtlMs'>>;
  /** Shorthand for behaviour.errorHttpStatus. */
  errorHttpStatus?: 200 | 'mapped';
  logger?: Logger;
  /** Clock for tokens, reservations and event times; default Date.now. */
  now?: () => number;
  /** Randomness of error rates and shuffles; default Math.random. */
  random?: () => number;
  /** Call log bound; default 5000. */
  maxCalls?: number;
  /** How often time-based transitions are applied without traffic; default 1 s (or less for short TTLs). */
  sweepIntervalMs?: number;
}

export interface Sandbox {
  readonly app: FastifyInstance;
  /** Starts listening; resolves the provider base URL including basePath. */
  listen(opts?: { port?: number; host?: string }): Promise<string>;
  /** Provider base URL (after listen), e.g. http://127.0.0.1:41234/production770. */
  readonly url: string;
  /** Control API base URL (after listen), e.g. http://127.0.0.1:41234/_sandbox. */
  readonly controlUrl: string;
  /** In-memory state, for in-process inspection. Treat as read-only; change it through `control`. */
  readonly state: SandboxState;
  readonly control: SandboxControl;
  /** Resolves once close() has finished. */
  readonly closed: Promise<void>;
  readonly events: SandboxEvents;
  readonly webhooks: WebhookDispatcher;
  close(): Promise<void>;
}

export const DEFAULT_TOKEN_TTL_MS = 60 * 60 * 1000;
export const DEFAULT_RESERVATION_TTL_MS = 15 * 60 * 1000;

export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const logger = options.logger ?? pino({ level: 'silent' });
  const basePath = normaliseBasePath(options.basePath ?? '');
  const seed = loadCatalogSeed(options.catalog);
  const behaviour: BehaviourSettings = {
    errorHttpStatus: options.errorHttpStatus ?? 200,
    amountMismatch: 'reject',
    invalidTransactionCode: 10001,
    reconfirm: 'fail',
    misspelledQuantity: 'reject',
    repeatedTransactionNumber: 'new-reservation',
    loginRevokesPreviousTokens: false,
    ...options.behaviour,
    tokenTtlMs: options.tokenTtlMs ?? DEFAULT_TOKEN_TTL_MS,
    reservationTtlMs: options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS,
  };
  const state = new SandboxState(seed, () => completeFaults(options.faults), () => ({ ...behaviour }));
  const events = new SandboxEvents();
  const closing = new AbortController();
  // Every delayed call (latency faults) listens on this one signal; hundreds may be in flight.
  setMaxListeners(0, closing.signal);
  const hanging = new Set<Socket>();
  const webhooks = new WebhookDispatcher(options.webhook ?? {}, {
    now,
    logger,
    random,
    onAttempt: (event, attempt) => events.emit('webhook.attempt', event, attempt),
  });
  const provider = new ProviderService({
    state,
    events,
    webhooks,
    now,
    signal: closing.signal,
    credentials: { username: options.username ?? SANDBOX_DEFAULT_USERNAME, privateKey: options.privateKey ?? SANDBOX_DEFAULT_PRIVATE_KEY },
  });
  const control = new SandboxControl({ state, provider, webhooks, now });

  // Typed as Fastify's base logger so the instance is a plain FastifyInstance for every consumer.
  const fastifyLogger: FastifyBaseLogger = logger;
  const app: FastifyInstance = Fastify({
    loggerInstance: fastifyLogger,
    // The provider routes log one concise line per call themselves (no headers, no bodies).
    logController: new LogController({ disableRequestLogging: true }),
    // Hung and delayed calls must not keep close() waiting.
    forceCloseConnections: true,
    exposeHeadRoutes: false,
    ajv: { customOptions: { removeAdditional: false } },
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ status: false, error: 'Not Found' }));
  await app.register(providerRoutes, {
    basePath,
    state,
    service: provider,
    events,
    logger,
    now,
    random,
    allowedIps: options.allowedIps ?? LOOPBACK_IPS,
    maxCalls: options.maxCalls ?? DEFAULT_MAX_CALLS,
    signal: closing.signal,
    hanging,
  });
  await app.register(controlRoutes, { control, state, webhooks, controlAllowedIps: options.controlAllowedIps ?? LOOPBACK_IPS });
  await app.ready();

  // Expiry and the end of busy mode must happen (and send their webhooks) without traffic too.
  const sweepEvery = options.sweepIntervalMs ?? Math.max(10, Math.min(1_000, Math.floor(behaviour.reservationTtlMs / 2)));
  const sweeper = setInterval(() => control.sweep(), sweepEvery);
  sweeper.unref();

  let origin: string | undefined;
  let closeStarted = false;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  return {
    closed,
    app,
    state,
    control,
    events,
    webhooks,
    get url() {
      if (!origin) throw new Error('sandbox is not listening yet');
      return `${origin}${basePath}`;
    },
    get controlUrl() {
      if (!origin) throw new Error('sandbox is not listening yet');
      return `${origin}${CONTROL_PREFIX}`;
    },
    async listen({ port = 0, host = '127.0.0.1' } = {}) {
      await app.listen({ port, host });
      const address = app.server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address === '::' ? '::1' : address.address}]` : address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
      origin = `http://${shownHost}:${address.port}`;
      return `${origin}${basePath}`;
    },
    async close() {
      if (closeStarted) return closed;
      closeStarted = true;
      clearInterval(sweeper);
      closing.abort();
      for (const socket of hanging) socket.destroy();
      hanging.clear();
      await webhooks.close();
      await app.close();
      events.removeAllListeners();
      markClosed();
    },
  };
}

/** '' or '/segment[/segment…]' without a trailing slash; anything else is a configuration error. */
export function normaliseBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed)) throw new Error(`invalid sandbox basePath "${basePath}"`);
  return trimmed;
}
