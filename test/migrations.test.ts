import { createHash, randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/platform/logger.js';
import { applyMigrations, DEFAULT_MIGRATIONS_DIR, ensureDatabase, migrate, readMigrations } from '../src/platform/migrate.js';
import { LogCapture } from './helpers/context.js';
import { TEST_DATABASE_URL, uniqueId } from './helpers/env.js';

const dbName = uniqueId('gw_migrate_');
const url = new URL(TEST_DATABASE_URL);
url.pathname = `/${dbName}`;
const freshUrl = url.toString();

async function query<T extends pg.QueryResultRow>(connectionString: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('migrations', () => {
  afterAll(async () => {
    const admin = new URL(TEST_DATABASE_URL);
    admin.pathname = '/postgres';
    await query(admin.toString(), `DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  });

  it('creates a missing database, applies every migration once, and records them as Prisma does', async () => {
    expect(await ensureDatabase(freshUrl)).toBe(true);
    expect(await ensureDatabase(freshUrl)).toBe(false);
    const files = await readMigrations();
    expect(files.length).toBeGreaterThan(0);

    // Three instances starting at once: the advisory lock lets one apply, the others find it done.
    const results = await Promise.all([applyMigrations(freshUrl), applyMigrations(freshUrl), applyMigrations(freshUrl)]);
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, files.length]);

    const rows = await query<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
      freshUrl,
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows.map((r) => r.migration_name)).toEqual(files.map((f) => f.name));
    for (const [i, row] of rows.entries()) {
      const sql = await readFile(path.join(DEFAULT_MIGRATIONS_DIR, files[i]!.name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.applied_steps_count).toBe(1);
    }
    const tables = await query<{ tablename: string }>(freshUrl, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    expect(tables.map((t) => t.tablename)).toContain('api_keys');

    expect(await migrate(freshUrl)).toEqual({ applied: [], alreadyApplied: files.length });
  });

  it('connects to an existing database directly, without the maintenance database', async () => {
    const connect = vi.spyOn(pg.Client.prototype, 'connect');
    try {
      expect(await ensureDatabase(freshUrl)).toBe(false);
      const databases = connect.mock.contexts.map((c) => (c as pg.Client).database);
      expect(databases).toEqual([dbName]);
    } finally {
      connect.mockRestore();
    }
  });

  it('says it is waiting for the migration lock, and gives up after the bound', async () => {
    const holder = new pg.Client({ connectionString: freshUrl });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [0x67617465776179n.toString()]);
      const logs = new LogCapture();
      const started = Date.now();
      await expect(applyMigrations(freshUrl, { log: createLogger('info', logs), lockTimeoutMs: 1_500 })).rejects.toThrow(/held the migration lock for over 2 s/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
      expect(logs.text).toMatch(/waiting for the migration lock/);

      const waiting = applyMigrations(freshUrl, { lockTimeoutMs: 10_000 });
      setTimeout(() => void holder.query('SELECT pg_advisory_unlock_all()'), 300);
      expect((await waiting).applied).toEqual([]);
    } finally {
      await holder.end();
    }
  });

  it('warns about, but accepts, migrations applied by a newer release (rolling deploys)', async () => {
    const future = '99991231000000_from_a_newer_release';
    await query(freshUrl, `INSERT INTO _prisma_migrations (id, checksum, migration_name, finished_at, applied_steps_count) VALUES ('${randomUUID()}', 'x', '${future}', now(), 1)`);
    try {
      const logs = new LogCapture();
      const result = await applyMigrations(freshUrl, { log: createLogger('info', logs) });
      expect(result.applied).toEqual([]);
      const warning = logs.lines.map((l) => JSON.parse(l) as { level: number; msg: string; unknownMigrations?: string[] }).find((l) => l.unknownMigrations);
      expect(warning).toMatchObject({ level: 40, unknownMigrations: [future] });
    } finally {
      await query(freshUrl, `DELETE FROM _prisma_migrations WHERE migration_name = '${future}'`);
    }
  });

  describe('with a copy of the migrations folder', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'gw-migrations-'));
      await cp(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('refuses to run when an applied migration was edited afterwards', async () => {
      const [first] = await readMigrations(dir);
      await writeFile(path.join(dir, first!.name, 'migration.sql'), `${first!.sql}\n-- edited\n`);
      await expect(applyMigrations(freshUrl, { dir })).rejects.toThrow(/was changed after it was applied/);
    });

    it('rolls back a failing migration completely and applies it once fixed', async () => {
      await cp(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true, force: true });
      const name = '99990101000000_broken';
      await cp(path.join(dir, (await readMigrations(dir))[0]!.name), path.join(dir, name), { recursive: true });
      await writeFile(path.join(dir, name, 'migration.sql'), 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n');
      await expect(applyMigrations(freshUrl, { dir })).rejects.toThrow(/99990101000000_broken failed/);
      const leftovers = await query(freshUrl, "SELECT 1 FROM pg_tables WHERE tablename = 'half_done'");
      expect(leftovers).toHaveLength(0);
      await writeFile(path.join(dir, name, 'migration.sql'), 'CREATE TABLE half_done (id int);\n');
      expect((await applyMigrations(freshUrl, { dir })).applied).toEqual([name]);
    });

    it('reports why a migration failed even when its connection died (ROLLBACK fails too)', async () => {
      const name = '99990102000000_kills_its_connection';
      await cp(path.join(dir, (await readMigrations(dir))[0]!.name), path.join(dir, name), { recursive: true });
      await writeFile(path.join(dir, name, 'migration.sql'), 'CREATE TABLE never_made (id int);\nSELECT pg_terminate_backend(pg_backend_pid());\n');
      // The dead connection also emits an 'error' event: unhandled, it would crash this process.
      await expect(applyMigrations(freshUrl, { dir })).rejects.toThrow(/99990102000000_kills_its_connection failed: terminating connection/);
      expect(await query(freshUrl, "SELECT 1 FROM pg_tables WHERE tablename = 'never_made'")).toHaveLength(0);
      await rm(path.join(dir, name), { recursive: true });
    });
  });

  it('keeps schema.prisma and the latest migration snapshot in step (run `npm run db:migration -- <name>`)', async () => {
    const files = await readMigrations();
    const latest = files.at(-1)!;
    const snapshot = await readFile(path.join(DEFAULT_MIGRATIONS_DIR, latest.name, 'schema.prisma'), 'utf8');
    const schema = await readFile(path.join(DEFAULT_MIGRATIONS_DIR, '..', 'schema.prisma'), 'utf8');
    expect(schema).toBe(snapshot);
  });
});
