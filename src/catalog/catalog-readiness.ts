import { ReadinessFailure, type ReadinessCheck } from '../platform/http/health-routes.js';
import type { CatalogCache } from './catalog-cache.js';

/**
 * Catalog age in /readyz. Not critical: a stale catalog still serves (and orders check live
 * stock and price anyway), so it must not take the instance out of rotation; it is there to be
 * seen and alerted on.
 */
export function catalogReadiness(cache: CatalogCache): ReadinessCheck {
  return {
    name: 'catalog',
    critical: false,
    check: async () => {
      const snapshot = cache.snapshot;
      const details = {
        syncedAt: snapshot.syncedAt?.toISOString() ?? null,
        ageSeconds: cache.ageMs() === undefined ? null : Math.round(cache.ageMs()! / 1000),
        vendors: snapshot.vendors.length,
        denominations: snapshot.denominationById.size,
      };
      if (cache.isStale()) throw new ReadinessFailure(snapshot.syncedAt ? 'stale' : 'never_synced', details);
      return details;
    },
  };
}
