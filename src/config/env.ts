import { isIP } from 'node:net';
import { validate as isValidCron } from 'node-cron';
import { z } from 'zod';
import { parseFailpoints } from '../platform/failpoints.js';

/**
 * The whole environment, validated in one place. Nothing else in the code reads process.env.
 * Names in UPPER_CASE are the contract's (gateway-contract.md); the rest are ours and documented
 * in the README. Secret values are never echoed in errors.
 */

const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes');

const int = (fallback: number, min: number, max: number) =>
  z
    .string()
    .default(String(fallback))
    .transform((v, ctx) => {
      const n = /^-?\d+$/.test(v.trim()) ? Number(v) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL (${protocols.join(' or ')})` },
  );

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

export interface CardCodeKey {
  id: string;
  key: Uint8Array;
}

/** `id:base64key[,id:base64key…]`, first = current. Keys are 32 bytes (XChaCha20-Poly1305). */
export function parseCardCodeKeys(raw: string): { keys?: CardCodeKey[]; problem?: string } {
  const keys: CardCodeKey[] = [];
  const seen = new Set<string>();
  const parts = raw.split(',').map((p) => p.trim()).filter(Boolean);
  if (parts.length === 0) return { problem: 'must list at least one key as id:base64key' };
  for (const [i, part] of parts.entries()) {
    const sep = part.indexOf(':');
    const id = sep > 0 ? part.slice(0, sep) : '';
    const b64 = sep > 0 ? part.slice(sep + 1) : '';
    if (!/^[A-Za-z0-9_.-]{1,32}$/.test(id)) {
      return { problem: `entry ${i + 1} must be id:base64key with an id of 1-32 letters, digits, _ . -` };
    }
    if (seen.has(id)) return { problem: `key id "${id}" appears twice` };
    seen.add(id);
    const key = /^[A-Za-z0-9+/]+={0,2}$/.test(b64) ? Buffer.from(b64, 'base64') : Buffer.alloc(0);
    if (key.length !== 32) return { problem: `key "${id}" must be 32 bytes, base64-encoded` };
    keys.push({ id, key: new Uint8Array(key) });
  }
  return { keys };
}

const cron = z.string().refine((v) => isValidCron(v), { message: 'must be a valid cron expression (5 or 6 fields)' });

function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export const envSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: int(8080, 0, 65535),
    HOST: z.string().min(1).default('127.0.0.1'),
    DATABASE_URL: url(['postgresql:', 'postgres:']).default('postgresql://postgres@127.0.0.1:5432/gateway'),
    DATABASE_POOL_MAX: int(10, 1, 500),
    REDIS_URL: url(['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
    QUEUE_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,40}$/, 'must be 1-40 letters, digits, _ or -')
      .default('gw'),
    UPSTREAM_BASE_URL: optionalString.pipe(url(['http:', 'https:']).optional()),
    UPSTREAM_SANDBOX: bool(false),
    UPSTREAM_USERNAME: optionalString,
    UPSTREAM_PRIVATE_KEY: optionalString,
    UPSTREAM_PROXY_URL: optionalString.pipe(url(['http:', 'https:']).optional()),
    UPSTREAM_TIMEOUT_MS: int(15_000, 100, 300_000),
    UPSTREAM_CONNECTIONS: int(64, 1, 1024),
    UPSTREAM_WEBHOOK_SECRET: optionalString,
    UPSTREAM_WEBHOOK_ALLOWED_IPS: optionalString,
    UPSTREAM_WEBHOOK_SECRET_FILE: z.string().min(1).default('.data/upstream-webhook-secret.dev'),
    WEBHOOK_MAX_BODY_BYTES: int(65_536, 1_024, 10 * 1024 * 1024),
    WEBHOOK_TOLERANCE_SECONDS: int(300, 1, 3_600),
    CARD_CODE_KEYS: optionalString,
    CARD_CODE_KEY_FILE: z.string().min(1).default('.data/card-code-keys.dev'),
    CALLBACK_SIGNING_SECRET: optionalString,
    CALLBACK_SECRET_FILE: z.string().min(1).default('.data/callback-secret.dev'),
    ORDER_WORKER_CONCURRENCY: int(50, 1, 1000),
    GATEWAY_FAILPOINTS: optionalString,
    RECONCILE_INTERVAL_MS: int(60_000, 100, 3_600_000),
    ORDER_LEASE_MS: int(60_000, 5_000, 600_000),
    SANDBOX_PORT: int(0, 0, 65535),
    CATALOG_SYNC_CRON: cron.default('0 3 * * *'),
    TZ: optionalString.refine((v) => v === undefined || isValidTimeZone(v), { message: 'must be an IANA time zone such as Europe/Berlin' }),
    CATALOG_STALE_AFTER_MS: int(36 * 3600_000, 60_000, 30 * 24 * 3600_000),
    CATALOG_SYNC_MAX_AGE_MS: int(24 * 3600_000, 0, 30 * 24 * 3600_000),
    CATALOG_SYNC_CONCURRENCY: int(4, 1, 32),
    MIGRATE_ON_START: bool(true),
    ORDER_MAX_QUANTITY: int(10, 1, 1000),
    RATE_LIMIT_MAX: int(600, 1, 1_000_000),
    RATE_LIMIT_WINDOW_MS: int(60_000, 1000, 86_400_000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SHUTDOWN_TIMEOUT_MS: int(25_000, 1000, 600_000),
    TRUST_PROXY: bool(false),
  });

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

/** `whsec_` (optional, as Standard Webhooks libraries accept) + base64 of at least 16 bytes. */
function isWebhookSecret(value: string): boolean {
  const v = value.trim();
  const b64 = v.startsWith('whsec_') ? v.slice('whsec_'.length) : v;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(b64) && Buffer.from(b64, 'base64').length >= 16;
}

/** `UPSTREAM_WEBHOOK_SECRET`: one or more secrets, comma-separated, current first (rotation). */
export function parseWebhookSecrets(raw: string): string[] {
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

/** `UPSTREAM_WEBHOOK_ALLOWED_IPS`: addresses or CIDR ranges, comma-separated. */
export function parseAllowedIps(raw: string): string[] {
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

function isIpOrCidr(entry: string): boolean {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash === -1) return true;
  const bits = entry.slice(slash + 1);
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function parsedUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * Rules between variables, checked on the raw values so they are reported together with the
 * per-variable problems (zod skips object-level refinements once any field has failed).
 */
export function crossFieldProblems(raw: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  if (present(raw.GATEWAY_FAILPOINTS)) {
    if (raw.NODE_ENV === 'production') problems.push('GATEWAY_FAILPOINTS is for crash tests and is refused when NODE_ENV=production');
    const { problem } = parseFailpoints(raw.GATEWAY_FAILPOINTS);
    if (problem) problems.push(`GATEWAY_FAILPOINTS ${problem}`);
  }
  const production = raw.NODE_ENV?.trim() === 'production';
  const sandboxOptIn = ['true', '1', 'yes'].includes(raw.UPSTREAM_SANDBOX?.trim() ?? '');
  if (present(raw.UPSTREAM_BASE_URL)) {
    if (sandboxOptIn) problems.push('UPSTREAM_SANDBOX=true contradicts UPSTREAM_BASE_URL; set only one of them');
    if (!present(raw.UPSTREAM_USERNAME)) problems.push('UPSTREAM_USERNAME is required when UPSTREAM_BASE_URL is set');
    if (!present(raw.UPSTREAM_PRIVATE_KEY)) problems.push('UPSTREAM_PRIVATE_KEY is required when UPSTREAM_BASE_URL is set');
    if (!present(raw.CALLBACK_SIGNING_SECRET)) {
      problems.push('CALLBACK_SIGNING_SECRET is required when UPSTREAM_BASE_URL is set (storefront callbacks are signed with it)');
    }
    if (!present(raw.CARD_CODE_KEYS)) {
      problems.push('CARD_CODE_KEYS is required when UPSTREAM_BASE_URL is set (a real provider issues real codes)');
    }
    const target = parsedUrl(raw.UPSTREAM_BASE_URL.trim());
    if (production && target?.protocol === 'http:' && !isLoopbackHost(target.hostname)) {
      problems.push('UPSTREAM_BASE_URL must use https: in production (the private key would travel in cleartext)');
    }
  } else if (production && !sandboxOptIn) {
    // Unset means "start the built-in sandbox": in production that would sell nothing real while
    // looking healthy, so it must be asked for explicitly.
    problems.push('UPSTREAM_BASE_URL is required in production (or set UPSTREAM_SANDBOX=true to run against the built-in sandbox)');
  }
  if (present(raw.CALLBACK_SIGNING_SECRET) && !isWebhookSecret(raw.CALLBACK_SIGNING_SECRET)) {
    problems.push('CALLBACK_SIGNING_SECRET must be whsec_ followed by base64 of at least 16 random bytes');
  }
  if (present(raw.UPSTREAM_WEBHOOK_SECRET) && !parseWebhookSecrets(raw.UPSTREAM_WEBHOOK_SECRET).every(isWebhookSecret)) {
    problems.push('UPSTREAM_WEBHOOK_SECRET must be whsec_ followed by base64 of at least 16 random bytes');
  }
  if (present(raw.UPSTREAM_WEBHOOK_ALLOWED_IPS)) {
    const bad = parseAllowedIps(raw.UPSTREAM_WEBHOOK_ALLOWED_IPS).filter((entry) => !isIpOrCidr(entry));
    if (bad.length > 0) problems.push(`UPSTREAM_WEBHOOK_ALLOWED_IPS must list IP addresses or CIDR ranges (comma-separated); not one: ${bad.join(', ')}`);
  }
  if (present(raw.CARD_CODE_KEYS)) {
    const { problem } = parseCardCodeKeys(raw.CARD_CODE_KEYS);
    if (problem) problems.push(`CARD_CODE_KEYS ${problem}`);
  }
  return problems;
}

export type Env = z.output<typeof envSchema>;
