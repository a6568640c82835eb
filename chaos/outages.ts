import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../test/helpers/env.js';

const exec = promisify(execFile);
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Real restarts of the machine's Redis and PostgreSQL. They hit everything else using them, so
 * they run only when asked for (CHAOS_ALLOW_REDIS_RESTART=1 / CHAOS_ALLOW_PG_RESTART=1), only
 * against a local server, and only when no other test run is visible at that moment.
 */

/** Why a restart must not happen now, or undefined when it may. */
export async function restartRefusal(kind: 'redis' | 'postgres', ownPids: Set<number>): Promise<string | undefined> {
  const url = new URL(kind === 'redis' ? TEST_REDIS_URL : TEST_DATABASE_URL);
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(url.hostname)) return `${kind} at ${url.hostname} is not local`;
  if (kind === 'redis' && (url.port || '6379') !== '6379') return `Redis is on port ${url.port}, the restart command is for 6379`;
  if (kind === 'postgres') {
    const { stdout } = await exec('pg_lsclusters', ['--no-header']).catch(() => ({ stdout: '' }));
    const cluster = stdout.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[0] === '15' && f[1] === 'main');
    if (!cluster) return 'no local PostgreSQL cluster "15 main" (pg_lsclusters)';
    if (cluster[2] !== (url.port || '5432')) return `cluster 15/main listens on ${cluster[2]}, DATABASE_URL on ${url.port || '5432'}`;
    if (cluster[3] !== 'online') return `cluster 15/main is ${cluster[3]}`;
  }
  // Other test runs on this machine (vitest, gateway processes, benchmarks) that are not ours.
  const { stdout } = await exec('ps', ['-eo', 'pid=,args=']);
  const others = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /vitest|src\/main\.ts|bench\/run\.ts|bin\/gateway\.js/.test(l))
    .filter((l) => !ownPids.has(Number(l.split(/\s+/)[0])) && Number(l.split(/\s+/)[0]) !== process.pid);
  if (others.length > 0) return `other test runs are using this machine (e.g. ${others[0]!.slice(0, 100)})`;
  return undefined;
}

/** PostgreSQL sessions from outside this chaos run, which a restart would break. */
export async function foreignPgSessions(ownDatabases: string[]): Promise<number> {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND NOT (datname = ANY($1))`,
      [ownDatabases],
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

/** `redis-cli shutdown nosave`, then a new server as this machine runs it (no persistence). */
export async function restartRedis(downMs: number): Promise<void> {
  await exec('redis-cli', ['-p', '6379', 'shutdown', 'nosave']).catch(() => undefined);
  await delay(downMs);
  await exec('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', '6379', '--save', '', '--appendonly', 'no']);
  for (let i = 0; i < 50; i++) {
    const { stdout } = await exec('redis-cli', ['-p', '6379', 'ping']).catch(() => ({ stdout: '' }));
    if (stdout.trim() === 'PONG') return;
    await delay(100);
  }
  throw new Error('Redis did not come back');
}

export async function restartPostgres(): Promise<void> {
  await exec('pg_ctlcluster', ['15', 'main', 'restart']);
}
