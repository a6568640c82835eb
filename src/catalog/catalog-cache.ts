import type { PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { Redis } from '../platform/redis.js';
import { CatalogSnapshot, type CatalogRows } from './catalog-snapshot.js';

export interface CatalogCacheDeps {
  prisma: PrismaClient;
  log: Logger;
  /** Age after which answers say `stale: true` (the sync is daily; allow a missed run's margin). */
  staleAfterMs: number;
  now?: () => number;
}

export async function readCatalogRows(prisma: PrismaClient): Promise<CatalogRows> {
  const [vendors, denominations, lastRun] = await Promise.all([
    prisma.vendor.findMany({ select: { id: true, nameEn: true, nameAr: true, active: true } }),
    prisma.denomination.findMany({ select: { id: true, vendorId: true, nameEn: true, nameAr: true, unitPrice: true, stock: true, active: true } }),
    prisma.catalogSyncRun.findFirst({
      where: { outcome: { in: ['succeeded', 'partial'] }, finishedAt: { not: null } },
      orderBy: { finishedAt: 'desc' },
      select: { finishedAt: true },
    }),
  ]);
  return { vendors, denominations, syncedAt: lastRun?.finishedAt ?? null };
}

/**
 * The catalog as every API instance serves it: loaded from PostgreSQL at start and again
 * whenever a sync finishes anywhere (Redis pub/sub), never from the provider on the request
 * path. A failed reload keeps the previous snapshot in service.
 */
export function createCatalogCache({ prisma, log, staleAfterMs, now = Date.now }: CatalogCacheDeps) {
  let snapshot = new CatalogSnapshot({ vendors: [], denominations: [], syncedAt: null });
  let loading: Promise<CatalogSnapshot> | undefined;

  async function load(): Promise<CatalogSnapshot> {
    const next = new CatalogSnapshot(await readCatalogRows(prisma));
    snapshot = next;
    log.debug({ vendors: next.vendors.length, denominations: next.denominationById.size, syncedAt: next.syncedAt }, 'catalog loaded');
    return next;
  }

  return {
    get snapshot(): CatalogSnapshot {
      return snapshot;
    },
    isStale(s: CatalogSnapshot = snapshot): boolean {
      return s.syncedAt === null || now() - s.syncedAt.getTime() > staleAfterMs;
    },
    /** Age of the served catalog in ms, or undefined when it was never synced. */
    ageMs(): number | undefined {
      return snapshot.syncedAt ? now() - snapshot.syncedAt.getTime() : undefined;
    },
    /** Reloads from the database; concurrent calls share one load. */
    async reload(): Promise<CatalogSnapshot> {
      loading ??= load().finally(() => {
        loading = undefined;
      });
      try {
        return await loading;
      } catch (err) {
        log.error({ err: { message: (err as Error).message } }, 'catalog reload failed; serving the previous catalog');
        return snapshot;
      }
    },
  };
}

export type CatalogCache = ReturnType<typeof createCatalogCache>;

/** Reloads `cache` whenever any instance announces a finished sync on `channel`. */
export async function listenForCatalogUpdates(subscriber: Redis, channel: string, cache: CatalogCache): Promise<() => Promise<void>> {
  const onMessage = (ch: string) => {
    if (ch === channel) void cache.reload();
  };
  subscriber.on('message', onMessage);
  await subscriber.subscribe(channel);
  return async () => {
    subscriber.off('message', onMessage);
    await subscriber.unsubscribe(channel).catch(() => undefined);
  };
}
