import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret, signedHeaders } from '../../src/platform/standard-webhooks.js';
import { startReceiver, statusUpdate, type Receiver } from './helpers.js';

/** The verification matrix, over real HTTP against the real app. Nothing refused is stored. */
describe('POST /webhooks/upstream: verification', () => {
  const current = generateSecret();
  const old = generateSecret();
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver({ secrets: [current], maxBodyBytes: 2_048 });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  async function expectRefused(res: { status: number; body: any; id: string }, status: number, code: string) {
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ status, code });
    expect(await receiver.row(res.id)).toBeNull();
  }

  it('accepts a valid delivery with 204, stores it once and processes it', async () => {
    const body = statusUpdate('confirmed');
    const res = await receiver.send(body);
    expect(res.status).toBe(204);
    const row = await receiver.settled(res.id);
    expect(row).toMatchObject({ type: 'order.status_updated', topic: 'order_status', status: 'processed', flagged: false, deliveries: 1, attempts: 1, sourceIp: '127.0.0.1' });
    expect(row.payload).toEqual(body);
    expect(row.occurredAt?.toISOString()).toBe(body.timestamp);
    expect(receiver.recorder.callsFor(res.id)).toBe(1);
  });

  it('accepts a sender signing with the old and the new secret when the receiver has only the new one', async () => {
    const res = await receiver.send(statusUpdate(), { sign: [old, current] });
    expect(res.status).toBe(204);
    expect(await receiver.row(res.id)).not.toBeNull();
  });

  it('refuses a tampered body (401) and stores nothing', async () => {
    const id = receiver.newId();
    const signedBody = JSON.stringify(statusUpdate('pending'));
    const headers = signedHeaders([current], id, signedBody);
    const res = await fetch(receiver.endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: signedBody.replace('pending', 'confirmed') });
    await expectRefused({ status: res.status, body: await res.json(), id }, 401, 'unauthorized');
  });

  it('refuses a signature made with another secret (401)', async () => {
    const res = await receiver.send(statusUpdate(), { sign: [old] });
    await expectRefused(res, 401, 'unauthorized');
    expect(res.body.reason).toBe('bad_signature');
  });

  it('refuses a signature header without a v1 entry, or with garbage (401)', async () => {
    await expectRefused(await receiver.send(statusUpdate(), { headers: { 'webhook-signature': 'v2,abc' } }), 401, 'unauthorized');
    await expectRefused(await receiver.send(statusUpdate(), { headers: { 'webhook-signature': 'v1,!!!not-base64 v1,' } }), 401, 'unauthorized');
  });

  for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    it(`refuses a delivery without ${header} (401)`, async () => {
      const res = await receiver.send(statusUpdate(), { headers: { [header]: undefined } });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthorized', reason: 'missing_headers' });
      expect(await receiver.row(res.id)).toBeNull();
    });
  }

  it('refuses a timestamp that is not Unix seconds (401)', async () => {
    const res = await receiver.send(statusUpdate(), { headers: { 'webhook-timestamp': '2026-01-01T00:00:00Z' } });
    await expectRefused(res, 401, 'unauthorized');
  });

  it('refuses a verified body that is not JSON (400 invalid_json), storing nothing', async () => {
    const res = await receiver.send(undefined, { rawBody: 'type=order.created&data=1' });
    await expectRefused(res, 400, 'invalid_json');
  });

  it('checks the signature before the JSON: an unsigned non-JSON body is a 401', async () => {
    const res = await receiver.send(undefined, { rawBody: '{not json', sign: [old] });
    await expectRefused(res, 401, 'unauthorized');
  });

  it('refuses a body over the limit with 413 before verifying it', async () => {
    const big = statusUpdate('confirmed', { padding: 'x'.repeat(3_000) });
    await expectRefused(await receiver.send(big), 413, 'payload_too_large');
  });

  it('refuses a chunked body over the limit with 413 too', async () => {
    const id = receiver.newId();
    const raw = JSON.stringify(statusUpdate('confirmed', { padding: 'y'.repeat(3_000) }));
    const chunks = [raw.slice(0, 1_000), raw.slice(1_000)];
    const stream = new ReadableStream({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const res = await fetch(receiver.endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...signedHeaders([current], id, raw) }, body: stream, duplex: 'half' });
    await expectRefused({ status: res.status, body: await res.json(), id }, 413, 'payload_too_large');
  });

  it('stores an unknown type flagged and ignored, answers 2xx, and never runs a handler', async () => {
    const res = await receiver.send({ type: 'merchant.balance_low', timestamp: new Date().toISOString(), data: { balance: '10.00' } });
    expect(res.status).toBe(204);
    const row = await receiver.row(res.id);
    expect(row).toMatchObject({ type: 'merchant.balance_low', topic: null, flagged: true, status: 'ignored' });
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.recorder.callsFor(res.id)).toBe(0);
  });

  it('stores a verified body that is JSON but not an event object as flagged and ignored', async () => {
    const res = await receiver.send([1, 2, 3]);
    expect(res.status).toBe(204);
    expect(await receiver.row(res.id)).toMatchObject({ type: '', topic: null, flagged: true, status: 'ignored' });
  });

  it('keeps one row per event id: the same delivery thrice is counted, and handled once', async () => {
    const id = receiver.newId();
    const raw = JSON.stringify(statusUpdate('confirmed'));
    for (let i = 0; i < 3; i++) expect((await receiver.send(undefined, { id, rawBody: raw })).status).toBe(204);
    const row = await receiver.settled(id);
    expect(row).toMatchObject({ status: 'processed', deliveries: 3, attempts: 1 });
    await new Promise((r) => setTimeout(r, 150));
    expect(receiver.recorder.callsFor(id)).toBe(1);
    expect(await receiver.ctx.prisma.webhookEvent.count({ where: { id } })).toBe(1);
  });

  it('keeps one row for ten concurrent copies of one event', async () => {
    const id = receiver.newId();
    const raw = JSON.stringify(statusUpdate('pending'));
    const answers = await Promise.all(Array.from({ length: 10 }, () => receiver.send(undefined, { id, rawBody: raw })));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(204));
    const row = await receiver.settled(id);
    expect(row.deliveries).toBe(10);
    await new Promise((r) => setTimeout(r, 150));
    expect(receiver.recorder.callsFor(id)).toBe(1);
  });

  it('never stores a card code sent in a webhook, and flags the event', async () => {
    const body = {
      type: 'order.finalized',
      timestamp: new Date().toISOString(),
      data: { transaction_id: 'TXN-x', status: 'completed', cards_count: 2, card_code: 'AAAA-1111', cards: [{ serial: 'SN1', code: 'BBBB-2222' }, { serial: 'SN2', cardCode: 'CCCC-3333' }, 'DDDD-4444'] },
    };
    const res = await receiver.send(body);
    expect(res.status).toBe(204);
    const row = await receiver.settled(res.id);
    const stored = JSON.stringify(row.payload);
    for (const code of ['AAAA-1111', 'BBBB-2222', 'CCCC-3333', 'DDDD-4444']) expect(stored).not.toContain(code);
    expect(stored).toContain('SN1');
    expect(row.flagged).toBe(true);
    expect(receiver.ctx.logs.text).not.toMatch(/AAAA-1111|BBBB-2222|CCCC-3333|DDDD-4444/);
  });

  it('documents the receiver and the support routes in the OpenAPI document', async () => {
    const doc = (await receiver.app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/webhooks/upstream', '/v1/support/webhooks', '/v1/support/webhooks/{id}/replay']));
  });

  it('leaves the rest of the app on its JSON parser', async () => {
    const res = await fetch(`${receiver.url}/v1/me`, { method: 'GET' });
    expect(res.status).toBe(401);
    const key = await receiver.ctx.key(['orders:write']);
    const order = await fetch(`${receiver.url}/v1/orders`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'k-1' }, body: '{not json' });
    expect(order.status).toBe(400);
    expect(await order.json()).toMatchObject({ code: 'invalid_json' });
  });
});

describe('POST /webhooks/upstream: secret rotation on the receiver', () => {
  const fresh = generateSecret();
  const old = generateSecret();
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver({ secrets: [fresh, old], worker: false });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('accepts a sender still signing with only the old secret when the receiver has [new, old]', async () => {
    expect((await receiver.send(statusUpdate(), { sign: [old] })).status).toBe(204);
    expect((await receiver.send(statusUpdate(), { sign: [fresh] })).status).toBe(204);
    expect((await receiver.send(statusUpdate(), { sign: [generateSecret()] })).status).toBe(401);
  });
});

describe('POST /webhooks/upstream: timestamp tolerance', () => {
  const secret = generateSecret();
  const NOW = 1_800_000_000;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver({ secrets: [secret], now: () => NOW * 1000 + 500, worker: false });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it.each([
    [+301, 401],
    [-301, 401],
    [+299, 204],
    [-299, 204],
    [+300, 204],
    [-300, 204],
  ])('a timestamp %i s from now answers %i', async (offset, status) => {
    const res = await receiver.send(statusUpdate(), { timestamp: NOW + offset });
    expect(res.status).toBe(status);
    if (status === 401) {
      expect(res.body).toMatchObject({ code: 'unauthorized', reason: 'stale_timestamp' });
      expect(await receiver.row(res.id)).toBeNull();
    } else {
      expect(await receiver.row(res.id)).not.toBeNull();
    }
  });
});

describe('POST /webhooks/upstream: source allow-list', () => {
  it('refuses a source outside the list with 403 before reading the body, and stores nothing', async () => {
    const receiver = await startReceiver({ allowedIps: ['10.0.0.0/8', '2001:db8::/32'], worker: false });
    try {
      const res = await receiver.send(statusUpdate());
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'forbidden' });
      expect(await receiver.row(res.id)).toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it('accepts a source on the list (an address or a range)', async () => {
    const receiver = await startReceiver({ allowedIps: ['192.0.2.1', '127.0.0.0/8'], worker: false });
    try {
      expect((await receiver.send(statusUpdate())).status).toBe(204);
    } finally {
      await receiver.close();
    }
  });
});
