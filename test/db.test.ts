import { afterAll, describe, expect, it } from 'vitest';
import { createPrisma, pingDatabase } from '../src/platform/db.js';
import { TEST_DATABASE_URL } from './helpers/env.js';

describe('database client', () => {
  const prisma = createPrisma({ url: TEST_DATABASE_URL, poolMax: 1, applicationName: 'gateway:test-db', statementTimeoutMs: 300 });
  afterAll(() => prisma.$disconnect());

  it('cancels a statement that runs past the configured timeout, and stays usable', async () => {
    const started = Date.now();
    await expect(prisma.$queryRaw`SELECT pg_sleep(3)`).rejects.toThrow(/statement timeout/i);
    expect(Date.now() - started).toBeLessThan(2_000);
    await pingDatabase(prisma);
  });

  it('applies the timeout to every connection of the pool', async () => {
    const [row] = await prisma.$queryRaw<{ statement_timeout: string }[]>`SHOW statement_timeout`;
    expect(row?.statement_timeout).toBe('300ms');
    const defaults = createPrisma({ url: TEST_DATABASE_URL, poolMax: 1 });
    try {
      const [d] = await defaults.$queryRaw<{ statement_timeout: string }[]>`SHOW statement_timeout`;
      expect(d?.statement_timeout).toBe('30s');
    } finally {
      await defaults.$disconnect();
    }
  });
});
