import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Key format: `gwk_<prefix>_<secret>`.
 * - prefix: 12 random base32 characters, not secret, unique; it finds the row without a scan and
 *   lets support recognise a key in a screenshot without seeing it.
 * - secret: 32 random bytes, base64url.
 * Only SHA-256 of the whole key is stored. A slow password hash buys nothing here: the secret
 * has 256 bits of entropy, so it cannot be guessed from its hash, and a fast hash keeps
 * authentication off the hot path's critical budget.
 */
export const KEY_PREFIX = 'gwk_';
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const KEY_PATTERN = /^gwk_([a-z2-7]{12})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedKey {
  key: string;
  prefix: string;
  hash: string;
}

export function generateApiKey(): GeneratedKey {
  const bytes = randomBytes(12);
  const prefix = Array.from(bytes, (b) => PREFIX_ALPHABET[b % 32]).join('');
  const secret = randomBytes(32).toString('base64url');
  const key = `${KEY_PREFIX}${prefix}_${secret}`;
  return { key, prefix, hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The prefix of a well-formed key, or undefined. Never throws, never echoes the key. */
export function parseApiKey(key: string): { prefix: string } | undefined {
  const match = KEY_PATTERN.exec(key);
  return match ? { prefix: match[1] as string } : undefined;
}

export function hashMatches(key: string, storedHash: string): boolean {
  const a = Buffer.from(hashApiKey(key), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
