import { Decimal } from 'decimal.js';
import type { PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import { isUpstreamError, type Denomination as UpstreamDenomination, type UpstreamClient, type Vendor as UpstreamVendor } from '../upstream/index.js';
import { mapWithConcurrency } from './concurrency.js';

export type SyncTrigger = 'schedule' | 'startup' | 'manual';

// A type alias, not an interface, so it is assignable to Prisma's JSON input type.
export type SyncError = {
  vendorId?: string;
  /** `upstream_<code>`, `upstream_<kind>`, `duplicate_card_id` or `database`. */
  code: string;
  message: string;
};

export interface SyncSummary {
  runId: string;
  outcome: 'succeeded' | 'partial' | 'failed';
  vendorsSeen: number;
  denominationsSeen: number;
  vendorsDeactivated: number;
  denominationsDeactivated: number;
  priceChanges: number;
  errors: SyncError[];
  startedAt: Date;
  finishedAt: Date;
}

export type SyncProgress =
  | { step: 'vendors'; count: number }
  | { step: 'vendor'; vendorId: string; denominations: number; done: number; total: number }
  | { step: 'vendor_failed'; vendorId: string; error: SyncError; done: number; total: number };

export interface SyncDeps {
  prisma: PrismaClient;
  upstream: Pick<UpstreamClient, 'getCardList' | 'getCardDetailsList'>;
  log: Logger;
  /** Vendors fetched at once; the provider states no rate limit, so stay modest. */
  concurrency?: number;
  now?: () => Date;
  onProgress?: (progress: SyncProgress) => void;
}

/** A safe description of a failure: codes and our own words, never a provider body. */
function describeFailure(err: unknown, vendorId?: string): SyncError {
  const base = vendorId === undefined ? {} : { vendorId };
  if (isUpstreamError(err)) {
    const code = err.kind === 'provider' && err.upstreamCode !== undefined ? `upstream_${err.upstreamCode}` : `upstream_${err.kind}`;
    return { ...base, code, message: err.message };
  }
  return { ...base, code: 'database', message: (err as Error).message.split('\n')[0]!.slice(0, 300) };
}

/** The provider's code 10002 on the details call: this vendor is not valid or not active for us. */
function isVendorNotActive(err: unknown): boolean {
  return isUpstreamError(err) && err.kind === 'provider' && err.upstreamCode === 10002;
}

/**
 * One catalog sync: get-card-list, then get-card-details-list per vendor with bounded
 * concurrency, each vendor written in its own transaction.
 *
 * - What the provider no longer lists becomes inactive, never deleted (orders point at it).
 * - A vendor whose details call fails keeps its previous data (we learned nothing new about
 *   it); the run is `partial` and says why. A 10002 answer is different: the provider says the
 *   vendor is not active for this merchant, so the vendor and its denominations go inactive.
 * - If the vendor list itself cannot be fetched the run is `failed` and nothing changes: the
 *   previous catalog stays in service.
 */
export async function syncCatalog(deps: SyncDeps, trigger: SyncTrigger): Promise<SyncSummary> {
  const { prisma, upstream, log, concurrency = 4, now = () => new Date(), onProgress } = deps;
  const run = await prisma.catalogSyncRun.create({ data: { trigger, startedAt: now() } });
  const errors: SyncError[] = [];
  const counts = { vendorsSeen: 0, denominationsSeen: 0, vendorsDeactivated: 0, denominationsDeactivated: 0, priceChanges: 0 };

  const finish = async (outcome: SyncSummary['outcome']): Promise<SyncSummary> => {
    const finishedAt = now();
    await prisma.catalogSyncRun.update({
      where: { id: run.id },
      data: { ...counts, outcome, finishedAt, errors: errors },
    });
    const summary = { runId: run.id, outcome, ...counts, errors, startedAt: run.startedAt, finishedAt };
    log.info({ runId: run.id, trigger, outcome, ...counts, errors: errors.length }, 'catalog sync finished');
    return summary;
  };

  let vendors: UpstreamVendor[];
  try {
    vendors = await upstream.getCardList();
  } catch (err) {
    errors.push(describeFailure(err));
    return finish('failed');
  }
  // Identifiers are case-sensitive: keep the first of exact duplicates only.
  vendors = [...new Map(vendors.map((v) => [v.vendorId, v])).values()];
  counts.vendorsSeen = vendors.length;
  onProgress?.({ step: 'vendors', count: vendors.length });

  let done = 0;
  const claimedCardIds = new Map<string, string>();
  await mapWithConcurrency(vendors, concurrency, async (vendor) => {
    let denominations: UpstreamDenomination[] | undefined;
    let notActive = false;
    try {
      denominations = await upstream.getCardDetailsList(vendor.vendorId);
    } catch (err) {
      const failure = describeFailure(err, vendor.vendorId);
      errors.push(failure);
      notActive = isVendorNotActive(err);
      done++;
      onProgress?.({ step: 'vendor_failed', vendorId: vendor.vendorId, error: failure, done, total: vendors.length });
    }
    try {
      if (denominations) {
        denominations = denominations.filter((d) => {
          const owner = claimedCardIds.get(d.cardId);
          if (owner !== undefined && owner !== vendor.vendorId) {
            errors.push({ vendorId: vendor.vendorId, code: 'duplicate_card_id', message: `card_id ${d.cardId} is also listed under vendor ${owner}; kept there` });
            return false;
          }
          claimedCardIds.set(d.cardId, vendor.vendorId);
          return true;
        });
        const written = await writeVendor(prisma, run.id, vendor, denominations, now());
        counts.denominationsSeen += denominations.length;
        counts.denominationsDeactivated += written.deactivated;
        counts.priceChanges += written.priceChanges;
        done++;
        onProgress?.({ step: 'vendor', vendorId: vendor.vendorId, denominations: denominations.length, done, total: vendors.length });
      } else {
        const touched = await touchVendor(prisma, vendor, notActive, now());
        counts.denominationsDeactivated += touched.deactivated;
        if (notActive) counts.vendorsDeactivated += touched.vendorDeactivated ? 1 : 0;
      }
    } catch (err) {
      errors.push(describeFailure(err, vendor.vendorId));
    }
  });

  try {
    const gone = await deactivateMissingVendors(prisma, vendors.map((v) => v.vendorId));
    counts.vendorsDeactivated += gone.vendors;
    counts.denominationsDeactivated += gone.denominations;
  } catch (err) {
    errors.push(describeFailure(err));
  }
  return finish(errors.length === 0 ? 'succeeded' : 'partial');
}

async function writeVendor(prisma: PrismaClient, runId: string, vendor: UpstreamVendor, denominations: UpstreamDenomination[], at: Date) {
  return prisma.$transaction(async (tx) => {
    await tx.vendor.upsert({
      where: { id: vendor.vendorId },
      create: { id: vendor.vendorId, nameEn: vendor.name, nameAr: vendor.nameAr, active: true, firstSeenAt: at, lastSeenAt: at },
      update: { nameEn: vendor.name, nameAr: vendor.nameAr, active: true, lastSeenAt: at },
    });
    const existing = new Map(
      (await tx.denomination.findMany({ where: { id: { in: denominations.map((d) => d.cardId) } }, select: { id: true, unitPrice: true } })).map((d) => [d.id, d.unitPrice]),
    );
    let priceChanges = 0;
    for (const d of denominations) {
      const data = { vendorId: vendor.vendorId, nameEn: d.nameEn, nameAr: d.nameAr, unitPrice: d.amount, unitPriceValue: d.amount, stock: d.balance, active: true, lastSeenAt: at };
      const previous = existing.get(d.cardId);
      if (previous === undefined) {
        await tx.denomination.create({ data: { id: d.cardId, ...data, firstSeenAt: at } });
        continue;
      }
      await tx.denomination.update({ where: { id: d.cardId }, data });
      // "15" and "15.00" are the same price: only a change of value is a price change.
      if (!new Decimal(previous).equals(d.amount)) {
        await tx.priceChange.create({ data: { denominationId: d.cardId, oldPrice: previous, newPrice: d.amount, syncRunId: runId, changedAt: at } });
        priceChanges++;
      }
    }
    const { count: deactivated } = await tx.denomination.updateMany({
      where: { vendorId: vendor.vendorId, active: true, id: { notIn: denominations.map((d) => d.cardId) } },
      data: { active: false },
    });
    return { deactivated, priceChanges };
  });
}

/** A vendor whose details we could not read: record that it is still listed; deactivate it on 10002. */
async function touchVendor(prisma: PrismaClient, vendor: UpstreamVendor, notActive: boolean, at: Date) {
  return prisma.$transaction(async (tx) => {
    const before = await tx.vendor.findUnique({ where: { id: vendor.vendorId }, select: { active: true } });
    await tx.vendor.upsert({
      where: { id: vendor.vendorId },
      create: { id: vendor.vendorId, nameEn: vendor.name, nameAr: vendor.nameAr, active: !notActive, firstSeenAt: at, lastSeenAt: at },
      update: { nameEn: vendor.name, nameAr: vendor.nameAr, lastSeenAt: at, ...(notActive ? { active: false } : {}) },
    });
    if (!notActive) return { deactivated: 0, vendorDeactivated: false };
    const { count } = await tx.denomination.updateMany({ where: { vendorId: vendor.vendorId, active: true }, data: { active: false } });
    return { deactivated: count, vendorDeactivated: before?.active !== false };
  });
}

async function deactivateMissingVendors(prisma: PrismaClient, listed: string[]) {
  return prisma.$transaction(async (tx) => {
    const { count: denominations } = await tx.denomination.updateMany({
      where: { active: true, vendorId: { notIn: listed } },
      data: { active: false },
    });
    const { count: vendors } = await tx.vendor.updateMany({ where: { active: true, id: { notIn: listed } }, data: { active: false } });
    return { vendors, denominations };
  });
}
