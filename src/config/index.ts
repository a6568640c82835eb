import { parseFailpoints, type Failpoint } from '../platform/failpoints.js';
import { crossFieldProblems, envSchema, parseAllowedIps, parseCardCodeKeys, parseWebhookSecrets, type CardCodeKey, type Env } from './env.js';

export type { CardCodeKey } from './env.js';

/** Credentials the sandbox accepts, and the gateway uses, when no provider is configured. */
export const SANDBOX_DEFAULT_USERNAME = 'sandbox-merchant';
export const SANDBOX_DEFAULT_PRIVATE_KEY = 'sandbox-private-key-not-secret';

export interface Config {
  env: Env['NODE_ENV'];
  http: { host: string; port: number; trustProxy: boolean };
  databaseUrl: string;
  databasePoolMax: number;
  redisUrl: string;
  queuePrefix: string;
  upstream: {
    /** Undefined: start the built-in sandbox and use it. */
    baseUrl: string | undefined;
    username: string;
    privateKey: string;
    proxyUrl: string | undefined;
    timeoutMs: number;
    /** Keep-alive connections to the provider; at least the order worker concurrency, or calls queue. */
    connections: number;
    /** The current (first) of `webhooks.secrets`; what the standalone sandbox signs with. */
    webhookSecret: string | undefined;
  };
  /** Provider webhooks (POST /webhooks/upstream). */
  webhooks: {
    /** `whsec_…` secrets, current first; any one verifies (rotation). Empty: none configured. */
    secrets: string[];
    /** Source addresses/CIDR ranges allowed to deliver; undefined = any source. */
    allowedIps: string[] | undefined;
    maxBodyBytes: number;
    toleranceSeconds: number;
    /** With the built-in sandbox and no secret configured: a dev secret generated into this file. */
    devSecretFile: string;
  };
  sandbox: { port: number };
  /** Parsed CARD_CODE_KEYS, or undefined when a dev key file is to be used. */
  cardCodeKeys: CardCodeKey[] | undefined;
  cardCodeKeyFile: string;
  callbacks: { signingSecret: string | undefined; devSecretFile: string };
  catalog: {
    syncCron: string;
    timeZone: string | undefined;
    /** Answers say `stale: true` when the last successful sync is older than this. */
    staleAfterMs: number;
    /** At start, sync now if the last successful sync is older than this (0: only when empty). */
    syncMaxAgeMs: number;
    syncConcurrency: number;
  };
  migrateOnStart: boolean;
  orders: {
    maxQuantity: number;
    workerConcurrency: number;
    reconcileIntervalMs: number;
    /**
     * How long a worker holds an order between commits (and its job lock): well above one provider
     * call's timeout, so a live worker never loses it mid-call; a dead worker's orders move on after it.
     */
    leaseMs: number;
  };
  /** Crash-test failpoints (never in production). */
  failpoints: Map<Failpoint, number> | undefined;
  rateLimit: { max: number; windowMs: number };
  logLevel: Env['LOG_LEVEL'];
  shutdownTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads and validates the environment. Throws ConfigError listing one line per problem, naming
 * the variable and what is wrong; values are never included, so secrets cannot leak here.
 * Empty variables count as unset.
 */
export function loadConfig(raw: Record<string, string | undefined> = process.env): Config {
  // `PORT=` in an env file means "not set", for every variable alike.
  const source = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const result = envSchema.safeParse(source);
  const problems = result.success
    ? []
    : result.error.issues.map((issue) => {
        const name = issue.path.length > 0 ? issue.path.join('.') : 'environment';
        const message = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
        return `${name} ${message}`;
      });
  problems.push(...crossFieldProblems(source));
  if (result.success && result.data.ORDER_LEASE_MS < 2 * result.data.UPSTREAM_TIMEOUT_MS) {
    problems.push('ORDER_LEASE_MS must be at least twice UPSTREAM_TIMEOUT_MS (a live worker must never lose an order while waiting on the provider)');
  }
  if (!result.success || problems.length > 0) throw new ConfigError([...new Set(problems)]);
  const e = result.data;
  const sandbox = e.UPSTREAM_BASE_URL === undefined;
  const webhookSecrets = e.UPSTREAM_WEBHOOK_SECRET ? parseWebhookSecrets(e.UPSTREAM_WEBHOOK_SECRET) : [];
  return {
    env: e.NODE_ENV,
    http: { host: e.HOST, port: e.PORT, trustProxy: e.TRUST_PROXY },
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.QUEUE_PREFIX,
    upstream: {
      baseUrl: e.UPSTREAM_BASE_URL,
      username: e.UPSTREAM_USERNAME ?? (sandbox ? SANDBOX_DEFAULT_USERNAME : ''),
      privateKey: e.UPSTREAM_PRIVATE_KEY ?? (sandbox ? SANDBOX_DEFAULT_PRIVATE_KEY : ''),
      proxyUrl: e.UPSTREAM_PROXY_URL,
      timeoutMs: e.UPSTREAM_TIMEOUT_MS,
      connections: e.UPSTREAM_CONNECTIONS,
      webhookSecret: webhookSecrets[0],
    },
    webhooks: {
      secrets: webhookSecrets,
      allowedIps: e.UPSTREAM_WEBHOOK_ALLOWED_IPS ? parseAllowedIps(e.UPSTREAM_WEBHOOK_ALLOWED_IPS) : undefined,
      maxBodyBytes: e.WEBHOOK_MAX_BODY_BYTES,
      toleranceSeconds: e.WEBHOOK_TOLERANCE_SECONDS,
      devSecretFile: e.UPSTREAM_WEBHOOK_SECRET_FILE,
    },
    sandbox: { port: e.SANDBOX_PORT },
    cardCodeKeys: e.CARD_CODE_KEYS ? parseCardCodeKeys(e.CARD_CODE_KEYS).keys : undefined,
    cardCodeKeyFile: e.CARD_CODE_KEY_FILE,
    callbacks: { signingSecret: e.CALLBACK_SIGNING_SECRET, devSecretFile: e.CALLBACK_SECRET_FILE },
    catalog: {
      syncCron: e.CATALOG_SYNC_CRON,
      timeZone: e.TZ,
      staleAfterMs: e.CATALOG_STALE_AFTER_MS,
      syncMaxAgeMs: e.CATALOG_SYNC_MAX_AGE_MS,
      syncConcurrency: e.CATALOG_SYNC_CONCURRENCY,
    },
    migrateOnStart: e.MIGRATE_ON_START,
    orders: { maxQuantity: e.ORDER_MAX_QUANTITY, workerConcurrency: e.ORDER_WORKER_CONCURRENCY, reconcileIntervalMs: e.RECONCILE_INTERVAL_MS, leaseMs: e.ORDER_LEASE_MS },
    failpoints: e.GATEWAY_FAILPOINTS ? parseFailpoints(e.GATEWAY_FAILPOINTS).points : undefined,
    rateLimit: { max: e.RATE_LIMIT_MAX, windowMs: e.RATE_LIMIT_WINDOW_MS },
    logLevel: e.LOG_LEVEL,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
  };
}
