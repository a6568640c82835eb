import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runSandboxCommand, type Sandbox } from '../../src/sandbox/index.js';
import { call, control, initiate, login, startSandbox } from './helpers.js';

type Calls = { calls: Array<Record<string, unknown>> };

describe('sandbox control and inspection API', () => {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('logs calls with endpoint, codes, duration and the raw body, password redacted and no token', async () => {
    const s = (sandbox = await startSandbox());
    const token = await login(s);
    await call(s.url, 'get-card-details-list', { token, rawBody: '{ "vendor_id" : 1 }' });
    const { json } = await control<Calls>(s, 'GET', '/calls');
    expect(json.calls).toHaveLength(2);
    const [loginCall, details] = json.calls;
    expect(loginCall).toMatchObject({ endpoint: 'login', method: 'POST', http_status: 200, provider_code: '11111', outcome: 'answered' });
    expect(loginCall!.raw_body).toBe('{"user_name":"sandbox-merchant","password":"[redacted]"}');
    expect(details).toMatchObject({ endpoint: 'get-card-details-list', raw_body: '{ "vendor_id" : 1 }', authorization: 'bearer', token_header_present: true });
    expect(typeof details!.duration_ms).toBe('number');
    expect(JSON.stringify(json)).not.toContain(token);
    expect(JSON.stringify(json)).not.toContain('sandbox-private-key-not-secret');
    const since = await control<Calls>(s, 'GET', `/calls?since=${loginCall!.seq as number}`);
    expect(since.json.calls).toHaveLength(1);
    expect((await control(s, 'DELETE', '/calls')).status).toBe(200);
    expect((await control<Calls>(s, 'GET', '/calls')).json.calls).toHaveLength(0);
  });

  it('never writes the private key, tokens or card codes to the log', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(chunk.toString()); done(); } });
    const s = (sandbox = await startSandbox({ logger: pino({ level: 'trace' }, stream) }));
    const token = await login(s);
    const id = (await initiate(s, token, 101, 1)).json.transaction_id as string;
    const confirm = await call(s.url, 'confirm-order', { token, body: { transaction_id: id, total_amount: 9.99, payment_id: 'p' } });
    const code = (confirm.json.data as Array<{ card_code: string }>)[0]!.card_code;
    const log = lines.join('');
    expect(log).toContain('sandbox provider call');
    for (const secret of [token, code, 'sandbox-private-key-not-secret']) expect(log).not.toContain(secret);
  });

  it('shows the live catalog and sets stock for a card', async () => {
    const s = (sandbox = await startSandbox());
    const token = await login(s);
    await initiate(s, token, 101, 2);
    const put = await control(s, 'PUT', '/stock/103', { stock: 7 });
    expect(put.json).toEqual({ card_id: '103', stock: 7 });
    expect((await control(s, 'PUT', '/stock/nope', { stock: 1 })).status).toBe(404);
    expect((await control(s, 'PUT', '/stock/101', { stock: -1 })).status).toBe(400);
    const balance = await call(s.url, 'get-balance-details', { token, body: { card_id: 103 } });
    expect(balance.json.data).toEqual([{ card_id: 103, balance: 7 }]);
    const catalog = await control<{ vendors: Array<{ vendor_id: string; cards: Array<Record<string, unknown>> }> }>(s, 'GET', '/catalog');
    const itunes = catalog.json.vendors.find((v) => v.vendor_id === '1')!;
    expect(itunes.cards[0]).toMatchObject({ card_id: '101', stock: 48, pending_units: 2, amount: '9.99' });
  });

  it('shows reservation timestamps on the sandbox clock', async () => {
    const clock = Date.parse('2031-05-01T12:00:00Z');
    const s = (sandbox = await startSandbox({ now: () => clock, reservationTtlMs: 5 * 60_000 }));
    const token = await login(s);
    await initiate(s, token, 101, 1, 12);
    const { json } = await control<{ reservations: Array<Record<string, unknown>> }>(s, 'GET', '/reservations?status=pending');
    expect(json.reservations[0]).toMatchObject({
      transaction_number: 12,
      status: 'pending',
      created_at: '2031-05-01T12:00:00.000Z',
      expires_at: '2031-05-01T12:05:00.000Z',
      settled_at: null,
    });
    expect((await control<{ reservations: unknown[] }>(s, 'GET', '/reservations?status=confirmed')).json.reservations).toHaveLength(0);
  });

  it('changes behaviour at run time and rejects unknown switches', async () => {
    const s = (sandbox = await startSandbox());
    const res = await control(s, 'PUT', '/behaviour', { invalidTransactionCode: 10002 });
    expect(res.json).toMatchObject({ invalidTransactionCode: 10002, amountMismatch: 'reject', reconfirm: 'fail' });
    expect((await control(s, 'PUT', '/behaviour', { invalidTransactionCode: 10004 })).status).toBe(400);
    expect((await control(s, 'PUT', '/behaviour', { nonsense: true })).status).toBe(400);
    const token = await login(s);
    const confirm = await call(s.url, 'confirm-order', { token, body: { transaction_id: 'x', total_amount: 1, payment_id: 'p' } });
    expect(confirm.json.code).toBe(10002);
  });

  it('resets to the seed: stock, reservations, sessions, settings', async () => {
    const s = (sandbox = await startSandbox());
    const token = await login(s);
    await initiate(s, token, 102, 3);
    await control(s, 'PUT', '/faults', { latencyMs: 5 });
    await control(s, 'PUT', '/behaviour', { reconfirm: 'same-cards' });
    expect((await control(s, 'POST', '/reset')).json).toEqual({ ok: true });
    expect((await call(s.url, 'get-card-list', { token })).json.code).toBe(10000);
    const fresh = await login(s);
    expect((await call(s.url, 'get-balance-details', { token: fresh, body: { card_id: 102 } })).json.data).toEqual([{ card_id: 102, balance: 3 }]);
    expect((await control<{ reservations: unknown[] }>(s, 'GET', '/reservations')).json.reservations).toHaveLength(0);
    expect((await control(s, 'GET', '/faults')).json.latencyMs).toBe(0);
    expect((await control(s, 'GET', '/behaviour')).json.reconfirm).toBe('fail');
  });

  it('answers 404 outside the provider and control paths', async () => {
    const s = (sandbox = await startSandbox());
    const res = await fetch(`${s.url}/api-service/card/get-card`, { method: 'POST' });
    expect(res.status).toBe(404);
    expect((await fetch(`${s.controlUrl}/nothing`)).status).toBe(404);
  });

  it('stops listening on close and can be closed twice', async () => {
    const s = await startSandbox();
    const url = s.url;
    await s.close();
    await s.close();
    await expect(fetch(`${url}/api-service/card/get-card-list`)).rejects.toThrow();
  });
});

describe('runSandboxCommand', () => {
  it('starts on the given base path, logs its URL, and stops when closed', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(chunk.toString()); done(); } });
    const running = await runSandboxCommand({ port: 0, basePath: '/production770', logger: pino({ level: 'info' }, stream), handleSignals: false });
    try {
      expect(running.url).toMatch(/\/production770$/);
      const token = await login(running.sandbox);
      expect((await call(running.url, 'get-card-list', { token })).json.status).toBe(true);
      expect(lines.join('')).toContain(running.url);
    } finally {
      await running.sandbox.close();
    }
    await expect(running.done).resolves.toBeUndefined();
  });

  it('refuses a webhook URL without a secret', async () => {
    await expect(runSandboxCommand({ webhookUrl: 'http://127.0.0.1:9/hooks', logger: pino({ level: 'silent' }) })).rejects.toThrow(/secret/);
  });
});
