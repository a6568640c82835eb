import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/platform/logger.js';
import { createPrisma, type PrismaClient } from '../src/platform/db.js';
import { createIsolatedDatabase } from './helpers/database.js';
import { createApiKeyService } from '../src/security/api-keys.js';
import { startGateway, waitForExit, waitForLog } from './helpers/cli.js';
import { uniqueId } from './helpers/env.js';

describe('gateway serve (a real process)', () => {
  // Its own database: a serving gateway's reconciler and scheduler act on the whole database.
  let db: { url: string; drop: () => Promise<void> };
  let prisma: PrismaClient;
  const name = uniqueId('serve-key-');
  beforeAll(async () => {
    db = await createIsolatedDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 2 });
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('starts with the built-in sandbox, serves the API, and shuts down cleanly on SIGTERM', async () => {
    const prefix = uniqueId('serve');
    const child = startGateway(['serve'], { DATABASE_URL: db.url, PORT: '0', SANDBOX_PORT: '0', LOG_LEVEL: 'info', QUEUE_PREFIX: prefix, CARD_CODE_KEY_FILE: `/tmp/${prefix}.keys` });
    try {
      const started = await waitForLog(child, (l) => l.msg === 'gateway started');
      expect(started.roles).toEqual(['api', 'worker', 'scheduler']);
      const url = String(started.url);
      expect(String(started.upstream)).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);

      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { checks: Record<string, { ok: boolean }> }).checks.database!.ok).toBe(true);

      const { key } = await createApiKeyService({ prisma, log: createLogger('silent') }).create(name, ['catalog:read']);
      const me = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { name: string }).name).toBe(name);
      expect((await fetch(`${url}/v1/me`)).status).toBe(401);

      // A whole purchase through the real process: catalog synced at start, order fulfilled, and
      // the embedded sandbox's signed webhooks received and processed by the gateway itself.
      const { key: buyer } = await createApiKeyService({ prisma, log: createLogger('silent') }).create(name, ['orders:write', 'catalog:read']);
      await expect.poll(async () => (await fetch(`${url}/v1/catalog/denominations/301`, { headers: { authorization: `Bearer ${buyer}` } })).status, { timeout: 15_000 }).toBe(200);
      const placed = await fetch(`${url}/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${buyer}`, 'content-type': 'application/json', 'idempotency-key': `serve-${prefix}`, prefer: 'wait=15' },
        body: JSON.stringify({ cardId: '301', quantity: 2 }),
      });
      const order = (await placed.json()) as { status: string; transactionId: string; cards: unknown[] };
      expect(order.status).toBe('fulfilled');
      expect(order.cards).toHaveLength(2);
      await expect
        .poll(async () => (await prisma.webhookEvent.findMany({ where: { payload: { path: ['data', 'transaction_id'], equals: order.transactionId } } })).map((e) => [e.type, e.status]).sort(), { timeout: 15_000 })
        .toEqual(expect.arrayContaining([['order.created', 'processed'], ['order.finalized', 'processed']]));

      const stopping = waitForLog(child, (l) => l.msg === 'shutting down');
      child.kill('SIGTERM');
      expect((await stopping).reason).toBe('SIGTERM');
      expect(await waitForExit(child)).toBe(0);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('runs only the requested roles', async () => {
    const prefix = uniqueId('serve');
    const child = startGateway(['serve', '--role', 'worker', '--role', 'scheduler'], { DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'info', QUEUE_PREFIX: prefix, CARD_CODE_KEY_FILE: `/tmp/${prefix}.keys` });
    try {
      const started = await waitForLog(child, (l) => l.msg === 'gateway started');
      expect(started.roles).toEqual(['worker', 'scheduler']);
      // No API, but the operations endpoints for probes and Prometheus.
      const url = String(started.url);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect(((await (await fetch(`${url}/readyz`)).json()) as { status: string }).status).toBe('ready');
      expect(await (await fetch(`${url}/metrics`)).text()).toContain('gateway_orders');
      expect((await fetch(`${url}/v1/me`)).status).toBe(404);
      child.kill('SIGTERM');
      expect(await waitForExit(child)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('stops with a clear message when PostgreSQL cannot be reached', async () => {
    const child = startGateway(['serve'], { DATABASE_URL: 'postgresql://postgres:pw-secret@127.0.0.1:1/gateway', LOG_LEVEL: 'fatal' });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    expect(await waitForExit(child)).toBe(1);
    expect(stderr).toMatch(/cannot migrate the database at postgresql:\/\/127\.0\.0\.1:1\/gateway \(DATABASE_URL\)/);
    expect(stderr).not.toContain('pw-secret');
  });
});
