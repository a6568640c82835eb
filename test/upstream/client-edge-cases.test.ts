import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { captureLogger, clientOptions, FAST_RETRY, mockAgentClient, PRIVATE_KEY, rejection, type MockAgentClient } from './helpers.js';

/**
 * What the sandbox cannot produce: answers that are not the provider's envelope (HTML error pages,
 * broken JSON, wrong shapes) via undici's MockAgent, and sockets dying mid-body or never answering
 * via a bare local HTTP server.
 */
const ORIGIN = 'https://provider.test';
const BASE = `${ORIGIN}/production770`;
const P = (endpoint: string) => `/production770/api-service/card/${endpoint}`;
const LOGIN_OK = { status: true, code: '11111', token: 'tok-ABC' };

describe('client against MockAgent', () => {
  let agent: MockAgent;
  let client: UpstreamClient;
  let calls: MockAgentClient['calls'];
  let log: MockAgentClient['log'];

  beforeEach(() => {
    ({ agent, client, calls, log } = mockAgentClient(BASE));
  });

  afterEach(async () => {
    await client.close();
    await agent.close();
  });

  const pool = () => agent.get(ORIGIN);
  const mockLogin = () => pool().intercept({ path: P('login'), method: 'POST' }).reply(200, LOGIN_OK);

  it('sends both auth headers, the placeholder Token on login, and JSON content type on GET too', async () => {
    const seen: Array<Record<string, string>> = [];
    pool()
      .intercept({ path: P('login'), method: 'POST' })
      .reply((opts) => {
        seen.push(opts.headers as Record<string, string>);
        return { statusCode: 200, data: LOGIN_OK };
      });
    pool()
      .intercept({ path: P('get-card-list'), method: 'GET' })
      .reply((opts) => {
        seen.push(opts.headers as Record<string, string>);
        return { statusCode: 200, data: { status: true, code: '11111', data: [] } };
      });
    expect(await client.getCardList()).toEqual([]);
    const [login, list] = seen;
    expect(login).toMatchObject({ 'content-type': 'application/json', token: 'none' });
    expect(login).not.toHaveProperty('authorization');
    expect(list).toMatchObject({ 'content-type': 'application/json', authorization: 'tok-ABC', token: 'tok-ABC' });
  });

  it('a 502 HTML page on a read is retried, then succeeds', async () => {
    mockLogin();
    pool().intercept({ path: P('get-card-list'), method: 'GET' }).reply(502, '<html><h1>502 Bad Gateway</h1></html>', {
      headers: { 'content-type': 'text/html' },
    }).times(2);
    pool()
      .intercept({ path: P('get-card-list'), method: 'GET' })
      .reply(200, { status: true, code: '11111', data: [{ vendor_id: '1', name: 'A', name_ar: 'ا' }] });
    expect(await client.getCardList()).toEqual([{ vendorId: '1', name: 'A', nameAr: 'ا' }]);
    expect(calls.records.filter((r) => r.endpoint === 'getCardList').map((r) => [r.attempt, r.ok, r.httpStatus, r.errorKind])).toEqual([
      [1, false, 502, 'malformed'],
      [2, false, 502, 'malformed'],
      [3, true, 200, undefined],
    ]);
  });

  it('a 503 HTML page on confirm is not retried and reports an unknown outcome', async () => {
    mockLogin();
    pool().intercept({ path: P('confirm-order'), method: 'POST' }).reply(503, '<html>Service Unavailable</html>');
    const e = await rejection(client.confirmOrder({ transactionId: 'TX1', totalAmount: '10.00', paymentId: 'pay-1' }));
    expect(e).toMatchObject({ kind: 'malformed', endpoint: 'confirmOrder', httpStatus: 503, retrySafe: false, outcomeUnknown: true });
    expect(calls.records.filter((r) => r.endpoint === 'confirmOrder')).toHaveLength(1);
  });

  it('broken JSON with HTTP 200 on a read is malformed and not retried', async () => {
    mockLogin();
    pool().intercept({ path: P('get-balance-details'), method: 'POST' }).reply(200, '{"status":true,"code":"11111","data":[{');
    const e = await rejection(client.getBalance('101'));
    expect(e).toMatchObject({ kind: 'malformed', httpStatus: 200, retrySafe: false, outcomeUnknown: false });
    expect(e.message).toBe('getBalance: malformed [HTTP 200]: body is not JSON');
  });

  it('a wrong shape (data not an array) is malformed', async () => {
    mockLogin();
    pool()
      .intercept({ path: P('get-card-details-list'), method: 'POST' })
      .reply(200, { status: true, code: '11111', data: { card_id: '1' } });
    const e = await rejection(client.getCardDetailsList('7'));
    expect(e).toMatchObject({ kind: 'malformed', endpoint: 'getCardDetailsList' });
    expect(e.message).toContain('data: invalid_type');
  });

  it('a balance entry for another card is refused rather than used', async () => {
    mockLogin();
    pool()
      .intercept({ path: P('get-balance-details'), method: 'POST' })
      .reply(200, { status: true, code: '11111', data: [{ card_id: 999, balance: 50 }] });
    const e = await rejection(client.getBalance('101'));
    expect(e).toMatchObject({ kind: 'malformed', endpoint: 'getBalance' });
  });

  it('confirm with a malformed card list: unknown outcome, and no card code in the error or the logs', async () => {
    mockLogin();
    pool()
      .intercept({ path: P('confirm-order'), method: 'POST' })
      .reply(200, { status: true, code: '11111', data: [{ card_code: 'CODE-LEAK-1' }] });
    const e = await rejection(client.confirmOrder({ transactionId: 'TX1', totalAmount: '5', paymentId: 'p' }));
    expect(e).toMatchObject({ kind: 'malformed', outcomeUnknown: true, upstreamCode: 11111 });
    expect(`${e.message} ${JSON.stringify(e)}`).not.toContain('CODE-LEAK');
    expect(log.text()).not.toContain('CODE-LEAK');
    expect(log.text()).not.toContain(PRIVATE_KEY);
    expect(log.text()).not.toContain('tok-ABC');
  });

  it('a transport error before any answer on initiate is network, sent, outcome unknown', async () => {
    mockLogin();
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    pool().intercept({ path: P('initiate-card-request'), method: 'POST' }).replyWithError(reset);
    const e = await rejection(client.initiateCardRequest({ cardId: '101', quantity: 1, transactionNumber: 5 }));
    expect(e).toMatchObject({ kind: 'network', requestSent: true, outcomeUnknown: true, retrySafe: false });
    expect(e.message).toBe('initiateCardRequest: network: ECONNRESET');
  });

  it('a hook that throws does not break the call', async () => {
    const throwing = createUpstreamClient({
      ...clientOptions(BASE, log.logger),
      dispatcher: agent,
      onCall: () => {
        throw new Error('metrics down');
      },
    });
    mockLogin();
    await expect(throwing.login()).resolves.toBeUndefined();
    expect(log.text()).toContain('upstream onCall hook failed');
  });
});

describe('client against a misbehaving socket', () => {
  let server: Server;
  let base: string;
  let behaviour: 'reset-mid-body' | 'never-answer' | 'slow-body' = 'reset-mid-body';
  const hits: string[] = [];

  beforeEach(async () => {
    hits.length = 0;
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url?.endsWith('/login')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(LOGIN_OK));
        return;
      }
      if (behaviour === 'never-answer') return;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"status":true,"code":"11111","data":[{"card_code":"PARTIAL-');
      if (behaviour === 'reset-mid-body') setTimeout(() => res.socket?.destroy(), 10);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  // Timeouts leave room for the login (and its first connect) on a loaded machine: only the call
  // under test must hit them.
  const make = (timeoutMs: number) => createUpstreamClient({ ...clientOptions(base, captureLogger().logger, timeoutMs), retry: FAST_RETRY });

  it('a reset mid-body on confirm: network error, outcome unknown, no partial code leaked, not retried', async () => {
    behaviour = 'reset-mid-body';
    const client = make(2_000);
    const e = await rejection(client.confirmOrder({ transactionId: 'T', totalAmount: '1', paymentId: 'p' }));
    await client.close();
    expect(e).toMatchObject({ kind: 'network', httpStatus: 200, requestSent: true, outcomeUnknown: true });
    expect(e.message).not.toContain('PARTIAL');
    expect(hits.filter((h) => h.endsWith('confirm-order'))).toHaveLength(1);
  });

  it('a reset mid-body on a read is retried up to maxAttempts', async () => {
    behaviour = 'reset-mid-body';
    const client = make(2_000);
    const e = await rejection(client.getCardList());
    await client.close();
    expect(e).toMatchObject({ kind: 'network', retrySafe: true, outcomeUnknown: false });
    expect(hits.filter((h) => h.endsWith('get-card-list'))).toHaveLength(FAST_RETRY.maxAttempts);
  });

  it('no response headers within timeoutMs on initiate: timeout, unknown outcome, sent once', async () => {
    behaviour = 'never-answer';
    const client = make(400);
    const e = await rejection(client.initiateCardRequest({ cardId: '1', quantity: 1, transactionNumber: 1 }));
    await client.close();
    expect(e).toMatchObject({ kind: 'timeout', outcomeUnknown: true, retrySafe: false });
    expect(e.message).toContain('UND_ERR_HEADERS_TIMEOUT');
    expect(hits.filter((h) => h.endsWith('initiate-card-request'))).toHaveLength(1);
  });

  it('a body that stalls past timeoutMs is a body timeout', async () => {
    behaviour = 'slow-body';
    const client = make(400);
    const e = await rejection(client.confirmOrder({ transactionId: 'T', totalAmount: '1', paymentId: 'p' }));
    await client.close();
    expect(e).toMatchObject({ kind: 'timeout', httpStatus: 200, outcomeUnknown: true });
    expect(e.message).toContain('UND_ERR_BODY_TIMEOUT');
  });
});

describe('client against a closed port', () => {
  it('connection refused is a network error that was never sent: safe to repeat even for initiate', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const client = createUpstreamClient({ ...clientOptions(`http://127.0.0.1:${port}`, captureLogger().logger, 500), retry: FAST_RETRY });
    const e = await rejection(client.initiateCardRequest({ cardId: '1', quantity: 1, transactionNumber: 1 }));
    await client.close();
    // Login is the first call and fails to connect, so initiate itself was never attempted.
    expect(e).toMatchObject({ kind: 'network', endpoint: 'login', requestSent: false, retrySafe: true, outcomeUnknown: false });
    expect(e.message).toBe('login: network: ECONNREFUSED');
  });
});
