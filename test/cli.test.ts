import { afterAll, describe, expect, it } from 'vitest';
import { createPrisma } from '../src/platform/db.js';
import { parseApiKey } from '../src/security/api-key-format.js';
import { runGateway } from './helpers/cli.js';
import { createIsolatedDatabase } from './helpers/database.js';
import { TEST_DATABASE_URL, uniqueId } from './helpers/env.js';

describe('gateway CLI', () => {
  const prisma = createPrisma({ url: TEST_DATABASE_URL, poolMax: 2 });
  const name = uniqueId('cli-key-');
  afterAll(async () => {
    await prisma.apiKey.deleteMany({ where: { name } });
    await prisma.$disconnect();
  });

  it('creates, lists and revokes a key; the key is printed once, alone on the last line', async () => {
    const created = await runGateway(['keys', 'create', '--name', name, '--scopes', 'catalog:read,orders:write']);
    expect(created.code).toBe(0);
    const lines = created.stdout.trim().split('\n');
    const key = lines.at(-1)!;
    const parsed = parseApiKey(key);
    expect(parsed).toBeDefined();
    expect(created.stderr).toMatch(/cannot be shown again/);
    const row = await prisma.apiKey.findUniqueOrThrow({ where: { prefix: parsed!.prefix } });
    expect(row.scopes).toEqual(['catalog:read', 'orders:write']);

    const listed = await runGateway(['keys', 'list']);
    expect(listed.code).toBe(0);
    const line = listed.stdout.split('\n').find((l) => l.includes(parsed!.prefix))!;
    expect(line).toContain(name);
    expect(line).toContain('active');
    expect(listed.stdout).not.toContain(key);

    const revoked = await runGateway(['keys', 'revoke', row.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`revoked ${row.id}`));
    expect(revoked.stderr).toMatch(/announced to \d+ running gateway instance/);
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id: row.id } })).revokedAt).toBeInstanceOf(Date);
    const json = await runGateway(['keys', 'list', '--json']);
    const entry = json.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; revokedAt: string | null }).find((e) => e.id === row.id);
    expect(entry?.revokedAt).toBeTruthy();
    expect(json.stdout).not.toMatch(/secretHash/i);
    expect(json.stdout).not.toContain(row.secretHash);
  });

  it('revokes even when Redis is unreachable, and says the announcement was not sent', async () => {
    const created = await runGateway(['keys', 'create', '--name', name, '--scopes', 'catalog:read']);
    const { prefix } = parseApiKey(created.stdout.trim().split('\n').at(-1)!)!;
    const revoked = await runGateway(['keys', 'revoke', prefix], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/^revoked /);
    expect(revoked.stderr).toMatch(/could not announce the revocation on Redis at redis:\/\/127\.0\.0\.1:1/);
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { prefix } })).revokedAt).toBeInstanceOf(Date);
  });

  it('refuses unknown scopes and unknown keys with a clear one-line error', async () => {
    const bad = await runGateway(['keys', 'create', '--name', name, '--scopes', 'catalog:read,orders:everything']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unknown scope\(s\): orders:everything/);
    expect(bad.stdout).toBe('');
    const missing = await runGateway(['keys', 'revoke', 'zzzzzzzzzzzz']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no key with id or prefix/);
  });

  it('syncs the catalog from the (built-in) provider with progress on stderr and a summary on stdout', async () => {
    const db = await createIsolatedDatabase();
    try {
      const result = await runGateway(['catalog', 'sync'], { DATABASE_URL: db.url });
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(/\d+ vendor\(s\) listed by the provider/);
      expect(result.stderr).toMatch(/\[1\/\d+\] \S+: \d+ denomination\(s\)/);
      expect(result.stdout).toMatch(/^sync succeeded: \d+ vendor\(s\), \d+ denomination\(s\)/);
      const local = createPrisma({ url: db.url, poolMax: 1 });
      try {
        expect(await local.denomination.count()).toBeGreaterThan(0);
        expect((await local.catalogSyncRun.findFirstOrThrow()).outcome).toBe('succeeded');
      } finally {
        await local.$disconnect();
      }
    } finally {
      await db.drop();
    }
  });

  it('migrates, reporting an up-to-date database', async () => {
    const result = await runGateway(['migrate']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/is up to date|applied \d+ migration/);
  });

  it('stops on invalid configuration with one line per problem and no secret echoed', async () => {
    const result = await runGateway(['keys', 'list'], {
      PORT: '99999',
      UPSTREAM_BASE_URL: 'https://provider.example',
      UPSTREAM_PRIVATE_KEY: 'pk-live-never-print-me',
      CARD_CODE_KEYS: 'k1:dG9vLXNob3J0',
    });
    expect(result.code).toBe(78);
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toBe('gateway: invalid configuration');
    expect(lines.slice(1).map((l) => l.trim().split(' ')[0]).sort()).toEqual(['CALLBACK_SIGNING_SECRET', 'CARD_CODE_KEYS', 'PORT', 'UPSTREAM_USERNAME']);
    expect(result.stderr).not.toContain('pk-live-never-print-me');
    expect(result.stderr).not.toContain('dG9vLXNob3J0');
  });
});
