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
 * - One advisory lock serialises concurrent starters (N instances starting at once).
 * - Each migration runs in its own transaction: PostgreSQL DDL is transactional, so a failing
 *   migration leaves nothing half-applied and is simply retried at the next start.
 * - An applied migration whose file changed afterwards stops the run: the database no longer
 *   matches what the code expects, and guessing would be worse than stopping.
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

/** Creates the database named in `url` when it does not exist (so a fresh server works). */
export async function ensureDatabase(url: string, log?: Logger): Promise<boolean> {
  const target = new URL(url);
  const database = decodeURIComponent(target.pathname.slice(1));
  if (!database) throw new MigrationError('DATABASE_URL names no database');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
    } catch (err) {
      // 42P04: another instance created it between our check and our CREATE.
      if ((err as { code?: string }).code === '42P04') return false;
      throw err;
    }
    log?.info({ database }, 'created database');
    return true;
  } finally {
    await client.end();
  }
}

export async function applyMigrations(url: string, options: { dir?: string; log?: Logger } = {}): Promise<MigrationResult> {
  const { log } = options;
  const migrations = await readMigrations(options.dir);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
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
      throw new MigrationError(`the database has migrations this code does not know: ${unknown.join(', ')} (is this an older release?)`);
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
        await client.query('ROLLBACK');
        throw new MigrationError(`migration ${migration.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(migration.name);
      log?.info({ migration: migration.name, ms: Date.now() - started }, 'applied migration');
    }
    return { applied, alreadyApplied: migrations.length - applied.length };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => undefined);
    await client.end();
  }
}

/** `gateway migrate`, and the start-up step: create the database if needed, then migrate. */
export async function migrate(url: string, options: { dir?: string; log?: Logger } = {}): Promise<MigrationResult> {
  await ensureDatabase(url, options.log);
  return applyMigrations(url, options);
}
