// Prisma CLI configuration. Only `prisma generate` is used through the CLI on this project:
// migrations are applied by `gateway migrate` (src/platform/migrate.ts), because the native
// schema engine that `prisma migrate` needs cannot be installed everywhere we run.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/gateway' },
});
