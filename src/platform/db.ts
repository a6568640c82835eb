import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';

export { Prisma } from '../generated/prisma/client.js';
export type { PrismaClient } from '../generated/prisma/client.js';

export interface DbOptions {
  url: string;
  poolMax?: number;
  /** Name shown in pg_stat_activity, useful when several roles share one database. */
  applicationName?: string;
}

/**
 * Prisma Client 7 on the `pg` driver adapter: no native query engine is needed at run time.
 * Timeouts keep a stuck database from holding requests forever.
 */
export function createPrisma({ url, poolMax = 10, applicationName = 'gateway' }: DbOptions): PrismaClient {
  const adapter = new PrismaPg({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: applicationName,
  });
  return new PrismaClient({ adapter });
}

export async function pingDatabase(prisma: PrismaClient): Promise<void> {
  await prisma.$queryRaw`SELECT 1`;
}
