import { beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { captureLogger, PRIVATE_KEY, rejection, USERNAME } from './helpers.js';
import { rewritingDispatcher, useHarness } from './sandbox-harness.js';

describe.each([
  ['Development (no path segment)', ''],
  ['Production (/production770 segment)', '/production770'],
])('every endpoint against the sandbox: %s', (_label, basePath) => {
  const h = useHarness('all', { basePath });
  let client: UpstreamClient;
  beforeAll(() => {
    client = h.client().client;
  });

  it('the base URL carries the environment path and every call lands under it', async () => {
    expect(h.url.endsWith(basePath)).toBe(true);
    await client.getCardList();
    const calls = await h.calls();
    expect(calls.map((c) => c.path)).toEqual([
      `${basePath}/api-service/card/login`,
      `${basePath}/api-service/card/get-card-list`,
    ]);
  });

  it('login: a fresh session each time login() is called', async () => {
    const before = (await h.calls('login')).length;
    await client.login();
    await client.login();
    expect((await h.calls('login')).length).toBe(before + 2);
  });

  it('getCardList: vendors with both names, ids kept case-sensitive', async () => {
    const vendors = await client.getCardList();
    expect(vendors).toContainEqual({ vendorId: '1', name: 'iTunes USA', nameAr: 'آيتونز أمريكا' });
    const ids = vendors.map((v) => v.vendorId);
    expect(ids).toContain('V-1');
    expect(ids).toContain('v-1');
  });

  it('getCardDetailsList: numeric vendor id sent as a number, others as the exact string', async () => {
    const itunes = await client.getCardDetailsList('1');
    expect(itunes).toContainEqual({ cardId: '101', nameEn: 'iTunes USA $10', nameAr: 'آيتونز أمريكا ١٠ دولار', amount: '9.99', balance: expect.any(Number) });
    const google = await client.getCardDetailsList('V-1');
    const xbox = await client.getCardDetailsList('v-1');
    expect(google.map((c) => c.cardId)).toEqual(['301', '302']);
    expect(xbox.map((c) => c.cardId)).toEqual(['401']);
    const bodies = (await h.calls('get-card-details-list')).map((c) => c.raw_body);
    expect(bodies).toEqual(['{"vendor_id":1}', '{"vendor_id":"V-1"}', '{"vendor_id":"v-1"}']);
  });

  it('getBalance: the live stock, for numeric and non-numeric card ids', async () => {
    expect(await client.getBalance('102')).toEqual({ cardId: '102', balance: 3 });
    expect(await client.getBalance('PSN-50')).toEqual({ cardId: 'PSN-50', balance: 10 });
    expect((await h.calls('get-balance-details')).map((c) => c.raw_body)).toEqual(['{"card_id":102}', '{"card_id":"PSN-50"}']);
  });

  it('initiate then confirm: body keys as the provider spells them, exact decimal total, cards returned', async () => {
    const { transactionId } = await client.initiateCardRequest({ cardId: '301', quantity: 3, transactionNumber: 9001 });
    expect(transactionId).toMatch(/^TXN-/);
    const [initiateCall] = (await h.calls('initiate-card-request')).slice(-1);
    expect(initiateCall!.raw_body).toBe('{"card_id":301,"quantiry":3,"transaction_number":9001}');

    // 0.10 × 3 is 0.30 exactly; in binary floating point it would be 0.30000000000000004.
    const cards = await client.confirmOrder({ transactionId, totalAmount: '0.30', paymentId: 'pay-9001' });
    expect(cards).toHaveLength(3);
    for (const card of cards) expect(card).toEqual({ cardCode: expect.stringMatching(/^\w{4}-\w{4}-\w{4}-\w{4}-\w{4}$/), cardNumber: expect.any(String) });
    expect(cards.map((c) => c.cardCode)).toEqual(h.sandbox.control.cardsOf(transactionId).map((c) => c.cardCode));

    const [confirmCall] = (await h.calls('confirm-order')).slice(-1);
    expect(confirmCall!.raw_body).toBe(`{"transaction_id":"${transactionId}","total_amount":0.3,"payment_id":"pay-9001"}`);
    const confirmations = (await h.control('GET', '/confirmations')) as { confirmations: Array<{ total_amount_raw: string; amount_matched: boolean }> };
    expect(confirmations.confirmations.at(-1)).toMatchObject({ total_amount_raw: '0.3', amount_matched: true });
  });

  it('integer totals are written without a fraction ("15.00" → 15)', async () => {
    const { transactionId } = await client.initiateCardRequest({ cardId: '102', quantity: 1, transactionNumber: 9002 });
    await client.confirmOrder({ transactionId, totalAmount: '15.00', paymentId: 'pay-9002' });
    const [confirmCall] = (await h.calls('confirm-order')).slice(-1);
    expect(confirmCall!.raw_body).toContain('"total_amount":15,');
  });

  it('authenticated calls carry the token in Authorization (bare) and a Token header', async () => {
    const calls = (await h.calls()).filter((c) => c.endpoint !== 'login');
    expect(calls.length).toBeGreaterThan(5);
    for (const call of calls) expect([call.authorization, call.token_header_present]).toEqual(['bare', true]);
    // The sandbox redacts the password in its own log; the key never appears there either way.
    for (const call of await h.calls('login')) expect(call.raw_body).not.toContain(PRIVATE_KEY);
  });
});

describe('every provider error code, from the real sandbox', () => {
  const h = useHarness('all');
  let client: UpstreamClient;
  beforeAll(() => {
    client = h.client().client;
  });

  it('10002: unknown or wrong-case vendor, unknown or disabled card — permanent, not retried', async () => {
    for (const call of [() => client.getCardDetailsList('V-9'), () => client.getCardDetailsList('V-1 '), () => client.getBalance('psn-50'), () => client.getBalance('502')]) {
      const e = await rejection(call());
      expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10002, retrySafe: false, outcomeUnknown: false });
    }
    const e = await rejection(client.initiateCardRequest({ cardId: '999', quantity: 1, transactionNumber: 1 }));
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10002, endpoint: 'initiateCardRequest', outcomeUnknown: false });
    expect((await h.calls('get-balance-details')).length).toBe(2);
  });

  it('10006: more units than in stock — permanent, nothing reserved', async () => {
    const e = await rejection(client.initiateCardRequest({ cardId: '102', quantity: 4, transactionNumber: 2 }));
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10006, retrySafe: false, outcomeUnknown: false });
    expect(e.message).toBe('initiateCardRequest: provider error 10006 (insufficient balance) [HTTP 200]');
    expect((await h.calls('initiate-card-request')).filter((c) => c.provider_code === 10006)).toHaveLength(1);
    const reservations = (await h.control('GET', '/reservations?transaction_number=2')) as { reservations: unknown[] };
    expect(reservations.reservations).toEqual([]);
  });

  it('10001 on confirm of an unknown transaction: not retried, outcome unknown (spec gives no better code)', async () => {
    const e = await rejection(client.confirmOrder({ transactionId: 'TXN-nope', totalAmount: '1', paymentId: 'p' }));
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10001, retrySafe: false, outcomeUnknown: true });
    expect((await h.calls('confirm-order')).length).toBe(1);
  });

  it('10000 on login (wrong key) is thrown by login and never looped', async () => {
    const wrong = h.client({ privateKey: 'not-the-key' });
    const before = (await h.calls('login')).length;
    const e = await rejection(wrong.client.getCardList());
    expect(e).toMatchObject({ kind: 'provider', endpoint: 'login', upstreamCode: 10000, retrySafe: false });
    expect((await h.calls('login')).length).toBe(before + 1);
    expect((await h.calls('get-card-list')).filter((c) => c.provider_code === '11111')).toHaveLength(0);
    expect(`${e.message}${JSON.stringify(e)}`).not.toContain('not-the-key');
  });

  describe('codes a correct client never provokes, produced by rewriting the request on its way to the sandbox', () => {
    it('10003: wrong HTTP method', async () => {
      const rw = rewritingDispatcher((o) => (o.path.endsWith('get-card-list') ? { ...o, method: 'POST' } : o));
      const { client: c } = h.client({ dispatcher: rw.dispatcher });
      const e = await rejection(c.getCardList());
      await rw.close();
      expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10003, retrySafe: false });
    });

    it('10005: card_id missing from the body', async () => {
      const rw = rewritingDispatcher((o) => (o.path.endsWith('get-balance-details') ? { ...o, body: '{}' } : o));
      const { client: c } = h.client({ dispatcher: rw.dispatcher });
      const e = await rejection(c.getBalance('101'));
      await rw.close();
      expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10005, retrySafe: false });
    });

    it.each([
      ['user_name', 10007],
      ['password', 10008],
    ])('login without %s: %i', async (field, code) => {
      const rw = rewritingDispatcher((o) => {
        if (!o.path.endsWith('/login')) return o;
        const body = JSON.parse(o.body as string) as Record<string, unknown>;
        delete body[field];
        return { ...o, body: JSON.stringify(body) };
      });
      const { client: c } = h.client({ dispatcher: rw.dispatcher });
      const e = await rejection(c.login());
      await rw.close();
      expect(e).toMatchObject({ kind: 'provider', endpoint: 'login', upstreamCode: code, retrySafe: false });
    });
  });
});

describe('error envelopes with mapped HTTP statuses (4xx/5xx + JSON)', () => {
  const h = useHarness('each', { errorHttpStatus: 'mapped' });

  it('are still branched on code: 10006 with 409, 10002 with 404, 10001 with 500 retried on reads', async () => {
    const { client, records } = h.client();
    expect(await rejection(client.initiateCardRequest({ cardId: '102', quantity: 99, transactionNumber: 3 }))).toMatchObject({
      upstreamCode: 10006,
      httpStatus: 409,
    });
    expect(await rejection(client.getBalance('nope'))).toMatchObject({ upstreamCode: 10002, httpStatus: 404 });
    await h.setFaults({ failNext: { 'get-card-list': 2 } });
    expect((await client.getCardList()).length).toBeGreaterThan(0);
    expect(records.filter((r) => r.endpoint === 'getCardList').map((r) => [r.httpStatus, r.upstreamCode])).toEqual([
      [500, 10001],
      [500, 10001],
      [200, 11111],
    ]);
  });

  it('10000 with 401 after token expiry still triggers the one re-login', async () => {
    const { client } = h.client();
    await client.getCardList();
    await h.expireTokens();
    await client.getCardList();
    expect((await h.calls('login')).length).toBe(2);
    expect((await h.calls('get-card-list')).map((c) => c.http_status)).toEqual([200, 401, 200]);
  });
});

describe('input validation happens before anything is sent', () => {
  const h = useHarness('all');

  it.each([
    ['negative total', { transactionId: 'T', totalAmount: '-1.00', paymentId: 'p' }],
    ['exponent total', { transactionId: 'T', totalAmount: '1e2', paymentId: 'p' }],
    ['NaN total', { transactionId: 'T', totalAmount: 'NaN', paymentId: 'p' }],
    ['Infinity total', { transactionId: 'T', totalAmount: 'Infinity', paymentId: 'p' }],
    ['empty payment id', { transactionId: 'T', totalAmount: '1', paymentId: '' }],
    ['empty transaction id', { transactionId: '', totalAmount: '1', paymentId: 'p' }],
  ])('confirm with %s', async (_label, input) => {
    const { client } = h.client();
    const e = await rejection(client.confirmOrder(input));
    expect(e).toMatchObject({ kind: 'invalid_request', endpoint: 'confirmOrder', requestSent: false, retrySafe: false, outcomeUnknown: false });
    expect(await h.calls()).toEqual([]);
  });

  it.each([
    { cardId: '', quantity: 1, transactionNumber: 1 },
    { cardId: '101', quantity: 0, transactionNumber: 1 },
    { cardId: '101', quantity: 1.5, transactionNumber: 1 },
    { cardId: '101', quantity: 1, transactionNumber: -1 },
    { cardId: '101', quantity: 1, transactionNumber: 'abc' },
  ])('initiate with %j', async (input) => {
    const { client } = h.client();
    expect(await rejection(client.initiateCardRequest(input))).toMatchObject({ kind: 'invalid_request', requestSent: false });
    expect(await h.calls()).toEqual([]);
  });
});

describe('client construction', () => {
  const valid = {
    baseUrl: 'https://provider.test/production770',
    username: USERNAME,
    privateKey: PRIVATE_KEY,
    timeoutMs: 1_000,
    logger: captureLogger().logger,
  };

  it.each([
    [{ baseUrl: 'ftp://x' }, /http/],
    [{ baseUrl: 'not a url' }, /valid URL/],
    [{ baseUrl: 'https://x/?a=1' }, /query/],
    [{ username: '' }, /username/],
    [{ privateKey: '' }, /privateKey is required/],
    [{ timeoutMs: 0 }, /timeoutMs/],
    [{ retry: { maxAttempts: 0 } }, /maxAttempts/],
  ])('rejects %j without echoing credentials', (patch, message) => {
    let error: unknown;
    try {
      createUpstreamClient({ ...valid, ...patch });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(message);
    expect(String(error)).not.toContain(PRIVATE_KEY);
    expect(String(error)).not.toContain(USERNAME);
  });

  it('accepts both base URL shapes, with or without a trailing slash', async () => {
    for (const baseUrl of ['https://dev.provider.test', 'https://provider.test/production770/']) {
      const client = createUpstreamClient({ ...valid, baseUrl });
      await client.close();
    }
  });
});
