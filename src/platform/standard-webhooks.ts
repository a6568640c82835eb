import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks (https://www.standardwebhooks.com) signing and verification on node:crypto.
 * Signed content is `${id}.${timestamp}.${rawBody}`, HMAC-SHA256, base64; the header holds
 * space-separated `v1,<sig>` entries so a sender can sign with several secrets during rotation.
 * Secrets are `whsec_` + base64 of the key bytes (a bare base64 string is accepted too).
 */

export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

export function decodeSecret(secret: string): Buffer {
  const b64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const key = Buffer.from(b64, 'base64');
  if (key.length < 16) throw new Error('webhook secret must decode to at least 16 bytes');
  return key;
}

export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function sign(key: Buffer, id: string, timestamp: number, body: string | Buffer): string {
  const mac = createHmac('sha256', key);
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return mac.digest('base64');
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** Headers for one delivery, signed with every secret given (first = current). */
export function signedHeaders(secrets: string[], id: string, body: string, timestamp = Math.floor(Date.now() / 1000)): SignedHeaders {
  const signatures = secrets.map((s) => `v1,${sign(decodeSecret(s), id, timestamp, body)}`);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures.join(' ') };
}

export type VerifyFailure = 'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'bad_signature';

export type VerifyResult = { ok: true; id: string; timestamp: number } | { ok: false; reason: VerifyFailure };

export interface VerifyInput {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer | string;
  /** Decoded keys; any one matching is enough (rotation). */
  keys: Buffer[];
  nowSeconds?: number;
  toleranceSeconds?: number;
}

function header(headers: VerifyInput['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function verify({ headers, rawBody, keys, nowSeconds = Math.floor(Date.now() / 1000), toleranceSeconds = DEFAULT_TOLERANCE_SECONDS }: VerifyInput): VerifyResult {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sigHeader = header(headers, 'webhook-signature');
  if (!id || !ts || !sigHeader) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: 'bad_timestamp' };
  const timestamp = Number(ts);
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return { ok: false, reason: 'stale_timestamp' };
  const candidates = sigHeader
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  for (const key of keys) {
    const expected = Buffer.from(sign(key, id, timestamp, rawBody), 'base64');
    for (const candidate of candidates) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) return { ok: true, id, timestamp };
    }
  }
  return { ok: false, reason: 'bad_signature' };
}
