import type { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { salvageOf, type UpstreamClient, type UpstreamError } from '../../src/upstream/index.js';
import { mockAgentClient, PRIVATE_KEY, rejection, type MockAgentClient } from './helpers.js';

/**
 * Lenient envelopes and salvage over real HTTP (undici MockAgent, no network): answers the sandbox
 * never produces because it always speaks the spec's envelope.
 */
const ORIGIN = 'https://provider.test';
const P = (endpoint: string) => `/api-service/card/${endpoint}`;
const LOGIN_OK = '{"status":true,"code":"11111","token":"tok-SALV"}';
const INITIATE = { cardId: '101', quantity: 2, transactionNumber: 9 };
const CONFIRM = { transactionId: 'TX-9', totalAmount: '20', paymentId: 'pay-9' };

describe('lenient envelopes and salvage over HTTP', () => {
  let agent: MockAgent;
  let client: UpstreamClient;
  let calls: MockAgentClient['calls'];
  let log: MockAgentClient['log'];

  beforeEach(() => {
    ({ agent, client, calls, log } = mockAgentClient(ORIGIN));
    agent.get(ORIGIN).intercept({ path: P('login'), method: 'POST' }).reply(200, LOGIN_OK).persist();
  });

  afterEach(async () => {
    await client.close();
    agent.assertNoPendingInterceptors();
    await agent.close();
  });

  const reply = (endpoint: string, body: string, status = 200) =>
    agent.get(ORIGIN).intercept({ path: P(endpoint), method: endpoint === 'get-card-list' ? 'GET' : 'POST' }).reply(status, body);
  const attempts = (endpoint: string) => calls.records.filter((r) => r.endpoint === endpoint);

  /** Card codes and transaction ids must not leave through logs or the error's serialized form. */
  function expectNotLeaked(e: UpstreamError, ...secrets: string[]): void {
    const evidence = [log.text(), JSON.stringify(e), e.message, JSON.stringify(calls.records)].join('\n');
    for (const secret of secrets) expect(evidence).not.toContain(secret);
  }

  it.each([
    '{"code":"11111","error":null,"transaction_id":"T1"}',
    '{"status":"true","code":"11111","transaction_id":"T1"}',
    '{"status":false,"code":" 11111 ","transaction_id":"T1"}',
  ])('initiate accepts %s', async (body) => {
    reply('initiate-card-request', body);
    expect(await client.initiateCardRequest(INITIATE)).toEqual({ transactionId: 'T1' });
  });

  it('a success code with status false is accepted by its code and logged as a warning', async () => {
    reply('initiate-card-request', '{"status":false,"code":"11111","transaction_id":"T1"}');
    await client.initiateCardRequest(INITIATE);
    const warnings = log.lines().map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 40);
    expect(warnings).toMatchObject([{ endpoint: 'initiateCardRequest', warning: 'success code with status false', msg: 'upstream answer inconsistent; accepted by its code' }]);
  });

  it('initiate: 10001 naming a transaction_id → provider error carrying it, sent once, outcome unknown', async () => {
    reply('initiate-card-request', '{"status":false,"code":10001,"error":"Error while Processing the request","transaction_id":"TX-SALVAGE-1"}');
    const e = await rejection(client.initiateCardRequest(INITIATE));
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10001, outcomeUnknown: true, retrySafe: false });
    expect(salvageOf(e)).toEqual({ transactionId: 'TX-SALVAGE-1' });
    expect(attempts('initiateCardRequest')).toHaveLength(1);
    const warn = log.lines().map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'upstream write answer refused; references salvaged for the caller');
    expect(warn).toMatchObject({ level: 40, endpoint: 'initiateCardRequest', salvagedTransactionId: true, salvagedCards: 0 });
  });

  it('initiate: 10000 naming a transaction_id is not re-sent after a re-login', async () => {
    reply('initiate-card-request', '{"status":false,"code":10000,"transaction_id":"TX-SALVAGE-2"}');
    const e = await rejection(client.initiateCardRequest(INITIATE));
    expect(e).toMatchObject({ upstreamCode: 10000, outcomeUnknown: true, retrySafe: false });
    expect(e.salvage).toEqual({ transactionId: 'TX-SALVAGE-2' });
    expect(attempts('initiateCardRequest')).toHaveLength(1);
    expect(attempts('login')).toHaveLength(1);
  });

  it('initiate: an answer without a code but with a nested transaction_id → malformed carrying it', async () => {
    reply('initiate-card-request', '{"status":true,"data":[{"transaction_id":123456789012345678901}]}');
    const e = await rejection(client.initiateCardRequest(INITIATE));
    expect(e).toMatchObject({ kind: 'malformed', httpStatus: 200, outcomeUnknown: true });
    expect(e.salvage).toEqual({ transactionId: '123456789012345678901' });
  });

  it('initiate: a 500 with a broken body that names the transaction_id → malformed carrying it', async () => {
    reply('initiate-card-request', '{"status":true,"code":"11111","transaction_id":"TX-SALVAGE-3","pad', 500);
    const e = await rejection(client.initiateCardRequest(INITIATE));
    expect(e).toMatchObject({ kind: 'malformed', httpStatus: 500, outcomeUnknown: true });
    expect(e.salvage).toEqual({ transactionId: 'TX-SALVAGE-3' });
    expect(attempts('initiateCardRequest')).toHaveLength(1);
  });

  it('confirm: numeric card codes and numbers are returned as exact strings', async () => {
    reply('confirm-order', '{"status":"true","code":11111,"data":[{"card_code":12345678901234567890,"card_number":1},{"card_code":"C-2","card_number":2}]}');
    expect(await client.confirmOrder(CONFIRM)).toEqual([
      { cardCode: '12345678901234567890', cardNumber: '1' },
      { cardCode: 'C-2', cardNumber: '2' },
    ]);
  });

  it('confirm: card_number null → malformed, the codes travel on the error and nowhere else', async () => {
    reply('confirm-order', '{"status":true,"code":"11111","data":[{"card_code":"CODE-SALV-1","card_number":null},{"card_code":"CODE-SALV-2","card_number":"N2"}]}');
    const e = await rejection(client.confirmOrder(CONFIRM));
    expect(e).toMatchObject({ kind: 'malformed', upstreamCode: 11111, outcomeUnknown: true, retrySafe: false });
    expect(e.salvage?.cards).toEqual([
      { cardCode: 'CODE-SALV-1', cardNumber: '' },
      { cardCode: 'CODE-SALV-2', cardNumber: 'N2' },
    ]);
    expect(attempts('confirmOrder')).toHaveLength(1);
    expectNotLeaked(e, 'CODE-SALV', PRIVATE_KEY, 'tok-SALV');
    expect(log.text()).toContain('"salvagedCards":2');
  });

  it('confirm: usable and unusable entries mixed → malformed with every usable card salvaged (none dropped silently)', async () => {
    reply('confirm-order', '{"status":true,"code":"11111","data":[{"card_code":"CODE-SALV-3","card_number":"N1"},{"card_number":"N2"},{"card_code":"CODE-SALV-4","card_number":"N3"}]}');
    const e = await rejection(client.confirmOrder(CONFIRM));
    expect(e.message).toBe('confirmOrder: malformed [HTTP 200]: data[1].card_code: invalid_union');
    expect(e.salvage?.cards?.map((c) => c.cardCode)).toEqual(['CODE-SALV-3', 'CODE-SALV-4']);
    expectNotLeaked(e, 'CODE-SALV');
  });

  it('confirm: an error code with cards attached salvages them, and the provider text stays out of logs', async () => {
    reply('confirm-order', '{"status":false,"code":10001,"error":"failed for token tok-ECHO","data":[{"card_code":"CODE-SALV-5","card_number":"N"}]}');
    const e = await rejection(client.confirmOrder(CONFIRM));
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10001, outcomeUnknown: true, providerMessage: 'failed for token tok-ECHO' });
    expect(e.salvage?.cards).toEqual([{ cardCode: 'CODE-SALV-5', cardNumber: 'N' }]);
    log.logger.error({ err: e }, 'confirm failed'); // what the pipeline would log
    expectNotLeaked(e, 'CODE-SALV', 'tok-ECHO');
  });

  it('reads: a 10001 with error null is retried like any 10001, not a permanent malformed answer', async () => {
    reply('get-card-list', '{"status":false,"code":10001,"error":null}');
    reply('get-card-list', '{"status":"false","code":"10001"}');
    reply('get-card-list', '{"status":true,"code":"11111","error":null,"data":[{"vendor_id":"1","name":"A","name_ar":"ا"}]}');
    expect(await client.getCardList()).toEqual([{ vendorId: '1', name: 'A', nameAr: 'ا' }]);
    expect(attempts('getCardList').map((r) => r.upstreamCode)).toEqual([10001, 10001, 11111]);
  });
});
