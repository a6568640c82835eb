import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Test files share one PostgreSQL database and one Redis; each test owns its rows, queue
    // names and key prefixes, so files can run in parallel.
    pool: 'forks',
    reporters: ['default'],
  },
});
