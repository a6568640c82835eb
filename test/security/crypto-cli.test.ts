import { Command } from 'commander';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { registerCryptoCommands } from '../../src/cli/crypto.js';
import { createPrisma, type PrismaClient } from '../../src/platform/db.js';
import { createCardVault, type CardVault } from '../../src/security/card-vault.js';
import { createIsolatedDatabase } from '../helpers/database.js';
import { clearCards, key, keysEnv, storeCards } from './fixtures.js';

const k0 = key('k0');
const k1 = key('k1');
const k2 = key('k2');

/** Runs `gateway crypto rotate` in this process, capturing what it writes and its exit code. */
async function runRotate(env: Record<string, string>, args: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const saved = { ...process.env };
  let stdout = '';
  let stderr = '';
  const outSpy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const errSpy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  delete process.env.UPSTREAM_BASE_URL;
  delete process.env.CARD_CODE_KEYS;
  Object.assign(process.env, { LOG_LEVEL: 'warn', ...env });
  process.exitCode = undefined;
  try {
    const program = new Command('gateway').exitOverride();
    registerCryptoCommands(program);
    await program.parseAsync(['node', 'gateway', 'crypto', 'rotate', ...args]);
    return { code: Number(process.exitCode ?? 0), stdout, stderr };
  } finally {
    outSpy.mockRestore();
    errSpy.mockRestore();
    process.exitCode = undefined;
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  }
}

describe('gateway crypto rotate', () => {
  let db: { url: string; drop: () => Promise<void> };
  let prisma: PrismaClient;
  let underK1: CardVault;

  beforeAll(async () => {
    db = await createIsolatedDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 2 });
    underK1 = await createCardVault([k1]);
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });
  beforeEach(async () => {
    await clearCards(prisma);
  });
  afterEach(() => {
    expect(process.exitCode).toBeUndefined();
  });

  it('rotates every code to the first key, progress on stderr, summary on stdout, exit 0', async () => {
    const cards = await storeCards(prisma, underK1, 4, 2);
    const run = await runRotate({ DATABASE_URL: db.url, CARD_CODE_KEYS: keysEnv([k2, k1]) }, ['--batch-size', '3']);

    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe('rotation to key "k2": 8 rotated, 0 already current, 0 failed');
    expect(run.stderr).toContain('rotating card codes to key "k2" (key ring: k2, k1)');
    expect(run.stderr).toContain('batch 3: 8 row(s) examined, 8 rotated, 0 failed');
    expect(await prisma.orderCard.count({ where: { keyId: 'k1' } })).toBe(0);
    const k2Only = await createCardVault([k2]);
    for (const c of cards) {
      const row = await prisma.orderCard.findUniqueOrThrow({ where: { orderId_position: { orderId: c.orderId, position: c.position } } });
      expect(k2Only.decrypt(row)).toBe(c.code);
    }
    // Nothing secret in the output: no code, no key.
    const output = run.stdout + run.stderr;
    for (const c of cards) expect(output).not.toContain(c.code);
    for (const k of [k1, k2]) expect(output).not.toContain(Buffer.from(k.key).toString('base64'));

    const again = await runRotate({ DATABASE_URL: db.url, CARD_CODE_KEYS: keysEnv([k2, k1]) });
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe('rotation to key "k2": 0 rotated, 8 already current, 0 failed');
  });

  it('exits 1 and lists rows under a key missing from the ring', async () => {
    await storeCards(prisma, underK1, 2, 1);
    const [lost] = await storeCards(prisma, await createCardVault([k0]), 1, 1);
    const run = await runRotate({ DATABASE_URL: db.url, CARD_CODE_KEYS: keysEnv([k2, k1]) });

    expect(run.code).toBe(1);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe('rotation to key "k2": 2 rotated, 0 already current, 1 failed');
    expect(lines[1]).toBe(`  failed ${lost!.orderId} position 0 (key "k0"): unknown_key`);
    expect(run.stderr).toContain('some codes were not rotated');
  });

  it('refuses a bad --batch-size and a bad key ring without touching the database', async () => {
    const bad = await runRotate({ DATABASE_URL: db.url, CARD_CODE_KEYS: keysEnv([k2, k1]) }, ['--batch-size', '0']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--batch-size must be a whole number');

    const shortKey = `k9:${Buffer.alloc(16, 7).toString('base64')}`;
    const config = await runRotate({ DATABASE_URL: db.url, CARD_CODE_KEYS: shortKey });
    expect(config.code).toBe(78);
    expect(config.stderr).toContain('CARD_CODE_KEYS key "k9" must be 32 bytes');
    expect(config.stderr).not.toContain(Buffer.alloc(16, 7).toString('base64'));
  });
});
