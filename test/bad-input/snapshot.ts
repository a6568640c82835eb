import type { PrismaClient } from '../../src/platform/db.js';
import { QUEUE_NAMES, type QueueRegistry } from '../../src/platform/queues.js';

/**
 * Columns a valid request may change on rows it only reads: an API key records when it was last
 * used. Everything else must stay byte for byte as it was.
 */
export const VOLATILE_COLUMNS: Readonly<Record<string, readonly string[]>> = { api_keys: ['last_used_at'] };

/** Tables every gateway database has; the snapshot covers these and any table added later. */
export const EXPECTED_TABLES = [
  'api_keys',
  'orders',
  'order_events',
  'order_cards',
  'callback_deliveries',
  'webhook_events',
  'audit_entries',
  'vendors',
  'denominations',
  'price_changes',
  'catalog_sync_runs',
  'provider_state',
] as const;

export type Snapshot = Record<string, string>;

/**
 * Row count and checksum of every application table (all of `public` but the migrations
 * ledger), every sequence's position, and BullMQ job counts per queue and state.
 */
export async function snapshot(prisma: PrismaClient, queues: QueueRegistry): Promise<Snapshot> {
  const out: Snapshot = {};
  const tables = await prisma.$queryRawUnsafe<{ name: string }[]>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations' ORDER BY 1",
  );
  for (const { name } of tables) {
    const minus = (VOLATILE_COLUMNS[name] ?? []).map((c) => ` - '${c}'`).join('');
    const [row] = await prisma.$queryRawUnsafe<{ n: number; sum: string | null }[]>(
      `SELECT count(*)::int AS n, md5(string_agg(x, ',' ORDER BY x)) AS sum FROM (SELECT (to_jsonb(t)${minus})::text AS x FROM "${name}" t) s`,
    );
    out[`table ${name}`] = `${row!.n} rows, md5 ${row!.sum ?? '-'}`;
  }
  const sequences = await prisma.$queryRawUnsafe<{ name: string; last: string | null }[]>(
    "SELECT sequencename AS name, last_value::text AS last FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1",
  );
  for (const s of sequences) out[`sequence ${s.name}`] = s.last ?? 'unused';
  for (const name of QUEUE_NAMES) {
    const counts = await queues.get(name).getJobCounts('active', 'completed', 'delayed', 'failed', 'prioritized', 'waiting', 'waiting-children');
    out[`queue ${name}`] = JSON.stringify(counts);
  }
  return out;
}

/** Lines naming what differs between two snapshots (empty: nothing changed). */
export function diff(before: Snapshot, after: Snapshot): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.filter((k) => before[k] !== after[k]).map((k) => `${k}: ${before[k] ?? '(absent)'} → ${after[k] ?? '(absent)'}`);
}
