import { migrate } from '../src/platform/migrate.js';
import { TEMPLATE_DATABASE_URL } from './helpers/database.js';
import { TEST_DATABASE_URL } from './helpers/env.js';

/** Creates and migrates the shared test database and the template isolated ones are cloned from. */
export default async function setup(): Promise<void> {
  await migrate(TEST_DATABASE_URL);
  await migrate(TEMPLATE_DATABASE_URL);
}
