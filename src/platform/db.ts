import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';

export { Prisma } from '../generated/prisma/client.js';
export type { PrismaClient } from '../generated/prisma/client.js';

export interface DbOptions {
  url: string;
  poolMax?: number;
  /** Name shown in pg_stat_activity, useful when several roles share one database. */
  applicationName?: string;
  /**
   * Longest a statement may run (including waiting for a lock) before PostgreSQL cancels it.
   * A one-off job that legitimately runs longer creates its own client with a larger value.
   */
  statementTimeoutMs?: number;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/** Client-side backstop past the server's own timeout, for a server that stopped answering. */
const QUERY_TIMEOUT_MARGIN_MS = 5_000;

/**
 * Prisma Client 7 on the `pg` driver adapter: no native query engine is needed at run time.
 * Timeouts keep a stuck database from holding requests forever: `statement_timeout` lets the
 * server cancel a runaway statement cleanly; `query_timeout` is the client's backstop for a
 * server (or network) that stopped answering altogether.
 */
export function createPrisma({ url, poolMax = 10, applicationName = 'gateway', statementTimeoutMs = DEFAULT_STATEMENT_TIMEOUT_MS }: DbOptions): PrismaClient {
  const adapter = new PrismaPg({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: applicationName,
    statement_timeout: statementTimeoutMs,
    // Every session in UTC, whatever the server's or the database's TimeZone setting: the pg
    // adapter sends a Date as a UTC timestamp without an offset (read in the session's zone),
    // and raw SQL mixes in server-side now() (order_events.at, column defaults).
    options: '-c TimeZone=UTC',
    query_timeout: statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
  });
  return new PrismaClient({ adapter });
}

export async function pingDatabase(prisma: PrismaClient): Promise<void> {
  await prisma.$queryRaw`SELECT 1`;
}
