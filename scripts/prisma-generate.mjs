// Generates the Prisma client into src/generated/prisma (git-ignored).
//
// `prisma generate` needs no native engine for the `prisma-client` generator with a driver
// adapter, but the CLI still tries to download the schema engine unless told where one is.
// Pointing PRISMA_SCHEMA_ENGINE_BINARY at any path skips that download; generate never runs it.
// Migrations are applied by the gateway itself (src/platform/migrate.ts).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let cli;
try {
  cli = require.resolve('prisma/build/index.js');
} catch {
  // Production installs (--omit=dev) have no prisma CLI; their client was generated at build time.
  if (existsSync(new URL('../src/generated/prisma/client.ts', import.meta.url))) process.exit(0);
  console.error('prisma CLI not installed and no generated client found: run npm ci (with dev dependencies)');
  process.exit(1);
}
const result = spawnSync(process.execPath, [cli, 'generate'], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? '/bin/false', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
});
process.exit(result.status ?? 1);
