import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Logger } from './logger.js';

/**
 * Applies prisma/migrations/* in order, keeping `_prisma_migrations` exactly as
 * `prisma migrate deploy` does (same table, sha256 checksums), so the Prisma CLI agrees with us
 * wherever its native engine is available. We do not call that engine because it cannot be
 * installed on every machine that runs the gateway (see README, "Migrations").
 *
 * - One advisory lock serialises concurrent starters (N instances starting at once); a long wait
 *   is logged, and bounded.
 * - Each migration runs in its own transaction: PostgreSQL DDL is transactional, so a failing
 *   migration leaves nothing half-applied and is simply retried at the next start.
 * - An applied migration whose file changed afterwards stops the run: the database no longer
 *   matches what the code expects, and guessing would be worse than stopping.
 * - Applied migrations this code does not know (a newer release ran) are reported, not refused.
 */

export const DEFAULT_MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');

// Arbitrary constant; "gatewaymg" in ASCII, so other tools' locks will not collide with it.
const MIGRATION_LOCK_KEY = 0x67617465776179n;

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

export async function readMigrations(dir = DEFAULT_MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

function pgCode(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

/**
 * A client whose asynchronous errors (the server closing an idle connection, a restart) are
 * logged instead of crashing the process as an unhandled 'error' event; the query in progress,
 * if any, still fails with its own error.
 */
function newClient(connectionString: string, log?: Logger): pg.Client {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
  client.on('error', (err: Error) => log?.warn({ err: { message: err.message } }, 'migration connection error'));
  return client;
}

/**
 * Creates the database named in `url` when it does not exist (so a fresh server works). Connects
 * to that database first: the usual case needs no access to the `postgres` maintenance database,
 * which a managed or least-privilege role may not have.
 */
export async function ensureDatabase(url: string, log?: Logger): Promise<boolean> {
  const target = new URL(url);
  const database = decodeURIComponent(target.pathname.slice(1));
  if (!database) throw new MigrationError('DATABASE_URL names no database');
  const probe = newClient(url, log);
  try {
    await probe.connect();
    return false;
  } catch (err) {
    // 3D000 invalid_catalog_name: the database does not exist. Anything else is not ours to fix.
    if (pgCode(err) !== '3D000') throw err;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = newClient(admin.toString(), log);
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } catch (err) {
    // 42P04: another instance created it between our check and our CREATE.
    if (pgCode(err) === '42P04') return false;
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
  log?.info({ database }, 'created database');
  return true;
}

export interface ApplyOptions {
  dir?: string;
  log?: Logger;
  /** Longest wait for another instance's migration run to finish (default 5 minutes). */
  lockTimeoutMs?: number;
}

const LOCK_POLL_MS = 200;
const LOCK_REPORT_AFTER_MS = 1_000;

/**
 * Takes the migration lock, polling so a long wait is visible in the log and bounded: a starter
 * blocked behind a crashed-but-connected migrator should say so and stop, not hang silently.
 */
async function acquireLock(client: pg.Client, timeoutMs: number, log?: Logger): Promise<void> {
  const started = Date.now();
  let reported = false;
  for (;;) {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK_KEY.toString()]);
    if (rows[0]?.locked) {
      if (reported) log?.info({ waitedMs: Date.now() - started }, 'got the migration lock');
      return;
    }
    const waited = Date.now() - started;
    if (waited >= timeoutMs) {
      throw new MigrationError(
        `another process has held the migration lock for over ${Math.round(timeoutMs / 1000)} s; ` +
          'check pg_locks for a stuck migrator (advisory lock key 0x67617465776179)',
      );
    }
    if (!reported && waited >= LOCK_REPORT_AFTER_MS) {
      reported = true;
      log?.info('waiting for the migration lock: another instance is migrating the database');
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(LOCK_POLL_MS, timeoutMs - waited)));
  }
}

export async function applyMigrations(url: string, options: ApplyOptions = {}): Promise<MigrationResult> {
  const { log, lockTimeoutMs = 5 * 60_000 } = options;
  const migrations = await readMigrations(options.dir);
  const client = newClient(url, log);
  await client.connect();
  let locked = false;
  try {
    await acquireLock(client, lockTimeoutMs, log);
    locked = true;
    await client.query(CREATE_MIGRATIONS_TABLE);
    const rows = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    );
    const done = new Map<string, string>();
    for (const row of rows.rows) {
      if (row.rolled_back_at) continue;
      if (!row.finished_at) {
        throw new MigrationError(
          `migration ${row.migration_name} was started and did not finish (recorded by another tool); resolve it before starting`,
        );
      }
      done.set(row.migration_name, row.checksum);
    }
    const known = new Set(migrations.map((m) => m.name));
    const unknown = [...done.keys()].filter((name) => !known.has(name));
    if (unknown.length > 0) {
      // A newer release migrated already: during a rolling deploy old instances still start
      // against the newer schema, which migrations keep backward compatible. Say so, go on.
      log?.warn({ unknownMigrations: unknown }, 'the database has migrations this release does not know (a newer release applied them); continuing');
    }
    const applied: string[] = [];
    for (const migration of migrations) {
      const checksum = done.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new MigrationError(`migration ${migration.name} was changed after it was applied`);
        }
        continue;
      }
      const started = Date.now();
      await client.query('BEGIN');
      try {
        const id = randomUUID();
        await client.query(
          'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
          [id, migration.checksum, migration.name],
        );
        await client.query(migration.sql);
        await client.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id]);
        await client.query('COMMIT');
      } catch (err) {
        // A failed ROLLBACK (connection gone) must not hide why the migration failed; the
        // server rolls back an open transaction when its connection ends anyway.
        await client.query('ROLLBACK').catch((rollbackErr: Error) => {
          log?.warn({ err: { message: rollbackErr.message } }, 'ROLLBACK after a failed migration failed');
        });
        throw new MigrationError(`migration ${migration.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(migration.name);
      log?.info({ migration: migration.name, ms: Date.now() - started }, 'applied migration');
    }
    return { applied, alreadyApplied: migrations.length - applied.length };
  } finally {
    if (locked) await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/** `gateway migrate`, and the start-up step: create the database if needed, then migrate. */
export async function migrate(url: string, options: ApplyOptions = {}): Promise<MigrationResult> {
  await ensureDatabase(url, options.log);
  return applyMigrations(url, options);
}
