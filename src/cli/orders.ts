import type { Command } from 'commander';
import { reconcileOrders } from '../orders/reconciler.js';
import { createQueueRegistry } from '../platform/queues.js';
import { connectDatabase, connectRedis, prepareDatabase } from '../serve.js';
import { withContext } from './context.js';
import { out } from './output.js';

export function registerOrderCommands(program: Command): void {
  const orders = program.command('orders').description('orders and their pipeline');

  orders
    .command('reconcile')
    .description('re-queue every unsettled order that has no live job, and pending callbacks; prints what it did')
    .option('--quiet-ms <ms>', 'leave orders changed more recently than this alone', (v) => Number(v), 30_000)
    .action((opts: { quietMs: number }) =>
      withContext(async ({ config, log }) => {
        await prepareDatabase(config, log);
        const prisma = await connectDatabase(config, 'gateway:cli');
        const redis = await connectRedis(config, log);
        const queues = createQueueRegistry({ redisUrl: config.redisUrl, producer: redis, prefix: config.queuePrefix });
        try {
          const report = await reconcileOrders({ prisma, queues, log, quietMs: Number.isFinite(opts.quietMs) ? opts.quietMs : 30_000 });
          out(`checked ${report.checked} unsettled order(s): ${report.requeued.length} re-queued, ${report.live} still in progress; ${report.callbacksRequeued} callback(s) re-queued`);
          for (const r of report.requeued) out(`  re-queued ${r.orderId} (${r.status})`);
        } finally {
          await queues.close();
          await redis.quit();
          await prisma.$disconnect();
        }
      }),
    );
}
