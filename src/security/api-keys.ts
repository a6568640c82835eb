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

interface CacheEntry {
  identity: ApiKeyIdentity | null;
  hash: string | null;
  expiresAt: number;
}

export interface ApiKeyServiceDeps {
  prisma: PrismaClient;
  log: Logger;
  /** Publisher for revocations; optional so one-shot CLI commands can run without Redis. */
  redis?: Redis;
  channel?: string;
  cacheTtlMs?: number;
  now?: () => number;
}

const LAST_USED_EVERY_MS = 60_000;

/**
 * API keys: creation (the key is returned once, only its hash stored), lookup by prefix,
 * revocation. Verified keys are cached in memory for a few seconds so the request path makes no
 * database query; a revocation is published on Redis and every instance drops its cached entry
 * at once, with the TTL as the bound if a message is missed.
 */
export function createApiKeyService({ prisma, log, redis, channel = 'gw:api-keys:revoked', cacheTtlMs = 10_000, now = Date.now }: ApiKeyServiceDeps) {
  const cache = new Map<string, CacheEntry>();
  const lastUsedWritten = new Map<string, number>();

  function touch(id: string): void {
    const at = now();
    if ((lastUsedWritten.get(id) ?? 0) + LAST_USED_EVERY_MS > at) return;
    lastUsedWritten.set(id, at);
    prisma.apiKey
      .update({ where: { id }, data: { lastUsedAt: new Date(at) } })
      .catch((err: Error) => log.warn({ keyId: id, err: { message: err.message } }, 'could not record key use'));
  }

  async function load(prefix: string): Promise<CacheEntry> {
    const cached = cache.get(prefix);
    if (cached && cached.expiresAt > now()) return cached;
    const row = await prisma.apiKey.findUnique({ where: { prefix } });
    const entry: CacheEntry =
      row && !row.revokedAt
        ? { identity: { id: row.id, name: row.name, prefix: row.prefix, scopes: row.scopes }, hash: row.secretHash, expiresAt: now() + cacheTtlMs }
        : { identity: null, hash: null, expiresAt: now() + cacheTtlMs };
    if (cache.size > 10_000) cache.clear();
    cache.set(prefix, entry);
    return entry;
  }

  return {
    async create(name: string, scopes: Scope[]): Promise<{ key: string; summary: ApiKeySummary }> {
      const generated = generateApiKey();
      const row = await prisma.apiKey.create({
        data: { name, prefix: generated.prefix, secretHash: generated.hash, scopes },
      });
      return { key: generated.key, summary: row };
    },

    async list(): Promise<ApiKeySummary[]> {
      return prisma.apiKey.findMany({ orderBy: { createdAt: 'asc' } });
    },

    /** Revokes by id or prefix; returns the summary, or undefined when no such key exists. */
    async revoke(idOrPrefix: string): Promise<ApiKeySummary | undefined> {
      const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrPrefix);
      const row = await prisma.apiKey.findFirst({ where: isUuid ? { id: idOrPrefix } : { prefix: idOrPrefix } });
      if (!row) return undefined;
      const updated = row.revokedAt ? row : await prisma.apiKey.update({ where: { id: row.id }, data: { revokedAt: new Date() } });
      cache.delete(row.prefix);
      await redis?.publish(channel, row.prefix).catch((err: Error) => {
        log.warn({ err: { message: err.message } }, 'could not broadcast key revocation; other instances drop it within the cache TTL');
      });
      return updated;
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
      cache.delete(prefix);
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
