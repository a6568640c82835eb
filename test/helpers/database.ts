import pg from 'pg';
import { TEST_DATABASE_URL, uniqueId } from './env.js';

/** A migrated database that test files clone when they need tables no other file touches. */
export const TEMPLATE_DATABASE = 'gateway_test_template';

function urlFor(database: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

export const TEMPLATE_DATABASE_URL = urlFor(TEMPLATE_DATABASE);

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlFor('postgres') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database cloned from the migrated template (fast: a file copy), for tests of global
 * state such as the catalog, where one file's sync would deactivate another file's vendors.
 */
export async function createIsolatedDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = uniqueId('gw_t_');
  // The template must have no other session while it is copied; retry briefly if one lingers.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin((c) => c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(TEMPLATE_DATABASE)}`));
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== '55006' || attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: urlFor(name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`)).then(() => undefined),
  };
}
