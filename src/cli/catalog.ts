import type { Command } from 'commander';
import { catalogUpdatedChannel } from '../catalog/catalog-jobs.js';
import { syncCatalog, type SyncProgress } from '../catalog/sync-catalog.js';
import { createRedis, waitForRedis } from '../platform/redis.js';
import { connectDatabase, connectUpstream, prepareDatabase } from '../serve.js';
import { withContext } from './context.js';
import { err, out } from './output.js';

function progressLine(p: SyncProgress): string {
  switch (p.step) {
    case 'vendors':
      return `${p.count} vendor(s) listed by the provider`;
    case 'vendor':
      return `[${p.done}/${p.total}] ${p.vendorId}: ${p.denominations} denomination(s)`;
    case 'vendor_failed':
      return `[${p.done}/${p.total}] ${p.vendorId}: FAILED ${p.error.code}: ${p.error.message}`;
  }
}

export function registerCatalogCommands(program: Command): void {
  const catalog = program.command('catalog').description('the local catalog cache');

  catalog
    .command('sync')
    .description('sync the catalog from the provider now (progress on stderr, summary on stdout); exit 0 succeeded, 2 partial, 1 failed')
    .action(() =>
      withContext(async ({ config, log }) => {
        await prepareDatabase(config, log);
        const prisma = await connectDatabase(config, 'gateway:cli');
        const upstream = await connectUpstream(config, log);
        try {
          const summary = await syncCatalog(
            { prisma, upstream: upstream.client, log, concurrency: config.catalog.syncConcurrency, onProgress: (p) => err(progressLine(p)) },
            'manual',
          );
          // Tell running gateways to reload; not fatal when Redis is away (they reload periodically).
          const redis = createRedis(config.redisUrl, 'producer');
          await waitForRedis(redis, 3_000)
            .then(() => redis.publish(catalogUpdatedChannel(config.queuePrefix), summary.runId))
            .catch(() => err('note: could not announce the update over Redis; running gateways pick it up within 5 minutes'));
          redis.disconnect();
          out(
            `sync ${summary.outcome}: ${summary.vendorsSeen} vendor(s), ${summary.denominationsSeen} denomination(s), ` +
              `${summary.priceChanges} price change(s), ${summary.vendorsDeactivated} vendor(s) and ${summary.denominationsDeactivated} denomination(s) deactivated ` +
              `in ${summary.finishedAt.getTime() - summary.startedAt.getTime()} ms (run ${summary.runId})`,
          );
          for (const e of summary.errors) out(`  ${e.vendorId ?? '(catalog)'}: ${e.code}: ${e.message}`);
          process.exitCode = summary.outcome === 'succeeded' ? 0 : summary.outcome === 'partial' ? 2 : 1;
        } finally {
          await upstream.close();
          await prisma.$disconnect();
        }
      }),
    );
}
