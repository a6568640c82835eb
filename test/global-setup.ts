import { migrate } from '../src/platform/migrate.js';
import { TEST_DATABASE_URL } from './helpers/env.js';

/** Creates and migrates the test database once per run. */
export default async function setup(): Promise<void> {
  await migrate(TEST_DATABASE_URL);
}
