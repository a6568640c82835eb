import type { PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { Redis } from '../platform/redis.js';
import { generateApiKey, hashMatches, parseApiKey } from './api-key-format.js';
import type { Scope } from './scopes.js';

export interface ApiKeyIdentity {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
}

export interface ApiKeySummary extends ApiKeyIdentity {
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** Every column but the hash: what `list`, `create` and `revoke` hand out. */
const SUMMARY_COLUMNS = { id: true, name: true, prefix: true, scopes: true, createdAt: true, lastUsedAt: true, revokedAt: true } as const;

export interface RevokeResult {
  summary: ApiKeySummary;
  /** Instances that received the announcement; undefined when it could not be sent (no Redis). */
  notified: number | undefined;
}

interface CacheEntry {
  identity: ApiKeyIdentity | null;
  hash: string | null;
  expiresAt: number;
}

/** A presented key that verified against `entry`; valid while `entry` is still the prefix's cache entry. */
interface VerifiedKey {
  prefix: string;
  entry: CacheEntry & { identity: ApiKeyIdentity };
  /** When this key last refreshed its cache entry's LRU position and its last-used time. */
  refreshedAt: number;
}

/** How often a remembered key in use refreshes its LRU position and last-used time. */
const REFRESH_EVERY_MS = 1_000;

export interface ApiKeyServiceDeps {
  prisma: PrismaClient;
  log: Logger;
  /** Publisher for revocations; optional so one-shot CLI commands can run without Redis. */
  redis?: Redis;
  channel?: string;
  cacheTtlMs?: number;
  /** Most keys cached at once; the least recently used is dropped first. */
  cacheMaxEntries?: number;
  now?: () => number;
}

const LAST_USED_EVERY_MS = 60_000;
/** How long a verified key is trusted without a query; also the bound when an announcement is lost. */
export const API_KEY_CACHE_TTL_MS = 10_000;
/** A load re-reads at most this often when revocations keep racing it; then it is not cached. */
const MAX_LOAD_ATTEMPTS = 3;

/**
 * API keys: creation (the key is returned once, only its hash stored), lookup by prefix,
 * revocation. Verified keys are cached in memory for a few seconds so the request path makes no
 * database query; a revocation is published on Redis and every instance drops its cached entry
 * at once, with the TTL as the bound if a message is missed.
 *
 * A revocation can land while a lookup of the same key is querying: the lookup then holds the
 * row as it was before, and caching it would accept the revoked key for a whole TTL. Each
 * revocation (local or announced) bumps a per-prefix generation; a lookup that sees the
 * generation change during its query reads again.
 *
 * The cache is an LRU bounded by `cacheMaxEntries`: a flood of random well-formed keys (each a
 * cached miss) pushes out only entries nobody used since, never the keys in active use.
 *
 * On top of it, keys that verified against a cached entry are remembered by their exact text
 * for as long as that entry lives, so the request path of a key in use is one Map lookup: no
 * SHA-256 (one hash object per request was the largest cost of a cached catalog answer). Such a
 * hit is valid only while the prefix's cache entry is the very one it verified against, so a
 * revocation or an expiry ends it at once. This keeps presented keys in process memory for up
 * to the cache TTL, as in-flight requests do anyway; a memory dump of a live gateway exposes
 * far more (vault keys, the provider key) than a storefront key. The lookup compares the key's
 * text, not in constant time: V8 hashes strings with a per-process random seed and compares
 * only candidates with the same hash, which gives a remote timing attack nothing to measure.
 */
export function createApiKeyService({
  prisma,
  log,
  redis,
  channel = 'gw:api-keys:revoked',
  cacheTtlMs = API_KEY_CACHE_TTL_MS,
  cacheMaxEntries = 10_000,
  now = Date.now,
}: ApiKeyServiceDeps) {
  const cache = new Map<string, CacheEntry>();
  const generations = new Map<string, number>();
  const verified = new Map<string, VerifiedKey>();
  let generationSeq = 0;
  const lastUsedWritten = new Map<string, number>();

  function remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    while (map.size > cacheMaxEntries) map.delete(map.keys().next().value!);
  }

  function invalidate(prefix: string): void {
    cache.delete(prefix);
    // Globally increasing, so even a dropped-then-recreated entry never repeats an old value.
    remember(generations, prefix, ++generationSeq);
  }

  function touch(id: string): void {
    const at = now();
    if ((lastUsedWritten.get(id) ?? 0) + LAST_USED_EVERY_MS > at) return;
    remember(lastUsedWritten, id, at);
    prisma.apiKey
      .update({ where: { id }, data: { lastUsedAt: new Date(at) } })
      .catch((err: Error) => log.warn({ keyId: id, err: { message: err.message } }, 'could not record key use'));
  }

  async function load(prefix: string): Promise<CacheEntry> {
    const cached = cache.get(prefix);
    if (cached && cached.expiresAt > now()) {
      remember(cache, prefix, cached);
      return cached;
    }
    for (let attempt = 1; ; attempt++) {
      const generation = generations.get(prefix);
      const row = await prisma.apiKey.findUnique({ where: { prefix }, select: { ...SUMMARY_COLUMNS, secretHash: true } });
      const entry: CacheEntry =
        row && !row.revokedAt
          ? { identity: { id: row.id, name: row.name, prefix: row.prefix, scopes: row.scopes }, hash: row.secretHash, expiresAt: now() + cacheTtlMs }
          : { identity: null, hash: null, expiresAt: now() + cacheTtlMs };
      if (generations.get(prefix) === generation) {
        remember(cache, prefix, entry);
        return entry;
      }
      if (attempt >= MAX_LOAD_ATTEMPTS) return entry;
    }
  }

  return {
    async create(name: string, scopes: Scope[]): Promise<{ key: string; summary: ApiKeySummary }> {
      const generated = generateApiKey();
      const summary = await prisma.apiKey.create({
        data: { name, prefix: generated.prefix, secretHash: generated.hash, scopes },
        select: SUMMARY_COLUMNS,
      });
      return { key: generated.key, summary };
    },

    async list(): Promise<ApiKeySummary[]> {
      return prisma.apiKey.findMany({ orderBy: { createdAt: 'asc' }, select: SUMMARY_COLUMNS });
    },

    /** Revokes by id or prefix and announces it; undefined when no such key exists. */
    async revoke(idOrPrefix: string): Promise<RevokeResult | undefined> {
      const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrPrefix);
      const row = await prisma.apiKey.findFirst({ where: isUuid ? { id: idOrPrefix } : { prefix: idOrPrefix }, select: SUMMARY_COLUMNS });
      if (!row) return undefined;
      const summary = row.revokedAt
        ? row
        : await prisma.apiKey.update({ where: { id: row.id }, data: { revokedAt: new Date() }, select: SUMMARY_COLUMNS });
      invalidate(row.prefix);
      let notified: number | undefined;
      if (redis) {
        notified = await redis.publish(channel, row.prefix).catch((err: Error) => {
          log.warn({ err: { message: err.message } }, 'could not broadcast key revocation; other instances drop it within the cache TTL');
          return undefined;
        });
      }
      return { summary, notified };
    },

    /**
     * The request path's fast lane: the answer for a key whose lookup is cached and fresh, without
     * a promise; `pending` when the database must be asked (then use authenticate).
     */
    authenticateCached(presented: string): ApiKeyIdentity | undefined | 'pending' {
      const hit = verified.get(presented);
      if (hit) {
        const at = now();
        if (cache.get(hit.prefix) === hit.entry && hit.entry.expiresAt > at) {
          // The LRU position and last use are refreshed about once a second, not per request.
          if (at - hit.refreshedAt >= REFRESH_EVERY_MS) {
            hit.refreshedAt = at;
            remember(cache, hit.prefix, hit.entry);
            touch(hit.entry.identity.id);
          }
          return hit.entry.identity;
        }
        verified.delete(presented);
      }
      const parsed = parseApiKey(presented);
      if (!parsed) return undefined;
      const cached = cache.get(parsed.prefix);
      if (!cached || cached.expiresAt <= now()) return 'pending';
      remember(cache, parsed.prefix, cached);
      if (!cached.identity || !cached.hash || !hashMatches(presented, cached.hash)) return undefined;
      remember(verified, presented, { prefix: parsed.prefix, entry: cached as VerifiedKey['entry'], refreshedAt: now() });
      touch(cached.identity.id);
      return cached.identity;
    },

    /** The identity behind a presented key, or undefined for any malformed, unknown or revoked key. */
    async authenticate(presented: string): Promise<ApiKeyIdentity | undefined> {
      const parsed = parseApiKey(presented);
      if (!parsed) return undefined;
      const entry = await load(parsed.prefix);
      if (!entry.identity || !entry.hash || !hashMatches(presented, entry.hash)) return undefined;
      touch(entry.identity.id);
      return entry.identity;
    },

    /** Drops a cached key (called when another instance announces a revocation). */
    forget(prefix: string): void {
      invalidate(prefix);
    },

    /** Keys cached right now (for tests and metrics). */
    cachedCount(): number {
      return cache.size;
    },

    channel,
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;

/** Subscribes to revocations from other instances; returns an unsubscribe function. */
export async function listenForRevocations(subscriber: Redis, service: ApiKeyService): Promise<() => Promise<void>> {
  const onMessage = (channel: string, prefix: string) => {
    if (channel === service.channel) service.forget(prefix);
  };
  subscriber.on('message', onMessage);
  await subscriber.subscribe(service.channel);
  return async () => {
    subscriber.off('message', onMessage);
    await subscriber.unsubscribe(service.channel).catch(() => undefined);
  };
}
