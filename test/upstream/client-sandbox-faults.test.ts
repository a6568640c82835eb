import { describe, expect, it } from 'vitest';
import { FAST_RETRY, rejection } from './helpers.js';
import { useHarness, type Harness } from './sandbox-harness.js';

describe('10001 storms and provider faults against the sandbox', () => {
  const h = useHarness('each');

  it.each([
    ['login', 'login', (c: ReturnType<Harness['client']>['client']) => c.login()],
    ['get-card-list', 'getCardList', (c: ReturnType<Harness['client']>['client']) => c.getCardList()],
    ['get-card-details-list', 'getCardDetailsList', (c: ReturnType<Harness['client']>['client']) => c.getCardDetailsList('1')],
    ['get-balance-details', 'getBalance', (c: ReturnType<Harness['client']>['client']) => c.getBalance('101')],
  ] as const)('%s: 3 × 10001 then success, with growing back-off between attempts', async (sandboxEndpoint, endpoint, call) => {
    const delays: number[] = [];
    const { client, records } = h.client({
      retry: { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 1_000, jitter: 'full' },
      random: () => 0.5,
      sleep: async (ms) => {
        delays.push(ms);
      },
    });
    await h.setFaults({ failNext: { [sandboxEndpoint]: 3 } });
    await call(client);
    expect(delays).toEqual([5, 10, 20]);
    expect(records.filter((r) => r.endpoint === endpoint).map((r) => r.upstreamCode)).toEqual([10001, 10001, 10001, 11111]);
    expect((await h.calls(sandboxEndpoint)).map((c) => c.provider_code)).toEqual([10001, 10001, 10001, '11111']);
  });

  it('a storm longer than maxAttempts fails with the last 10001, marked safe to retry later', async () => {
    const { client } = h.client();
    await client.login();
    await h.setFaults({ errorRate: { 'get-balance-details': 1 } });
    const e = await rejection(client.getBalance('101'));
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10001, retrySafe: true, outcomeUnknown: false });
    expect(await h.calls('get-balance-details')).toHaveLength(FAST_RETRY.maxAttempts);
  });

  it('backs off really, with full jitter, when sleep is not injected', async () => {
    const { client } = h.client({ retry: { maxAttempts: 3, baseDelayMs: 40, maxDelayMs: 40, jitter: 'none' } });
    await client.login();
    await h.setFaults({ failNext: { 'get-card-list': 2 } });
    const started = performance.now();
    await client.getCardList();
    expect(performance.now() - started).toBeGreaterThanOrEqual(75);
  });

  it.each([
    ['initiate-card-request', 'initiateCardRequest'],
    ['confirm-order', 'confirmOrder'],
  ] as const)('%s: 10001 is never retried by the client', async (sandboxEndpoint, endpoint) => {
    const { client } = h.client();
    const { transactionId } = await client.initiateCardRequest({ cardId: '101', quantity: 1, transactionNumber: 1 });
    await h.setFaults({ errorRate: { [sandboxEndpoint]: 1 } });
    const e = await rejection(
      endpoint === 'initiateCardRequest'
        ? client.initiateCardRequest({ cardId: '101', quantity: 1, transactionNumber: 2 })
        : client.confirmOrder({ transactionId, totalAmount: '9.99', paymentId: 'p1' }),
    );
    expect(e).toMatchObject({ kind: 'provider', endpoint, upstreamCode: 10001, retrySafe: false, outcomeUnknown: true });
    expect((await h.calls(sandboxEndpoint)).filter((c) => c.provider_code === 10001)).toHaveLength(1);
  });

  it('initiate: the provider reserves, then drops the connection → outcome unknown, one reservation, no retry', async () => {
    const { client } = h.client();
    await client.login();
    await h.setFaults({ afterCommit: { 'initiate-card-request': { action: 'drop', times: 1 } } });
    const e = await rejection(client.initiateCardRequest({ cardId: '201', quantity: 1, transactionNumber: 4242 }));
    expect(e).toMatchObject({ kind: 'network', endpoint: 'initiateCardRequest', requestSent: true, retrySafe: false, outcomeUnknown: true });
    const { reservations } = (await h.control('GET', '/reservations?transaction_number=4242')) as { reservations: unknown[] };
    expect(reservations).toHaveLength(1);
    expect(await h.calls('initiate-card-request')).toHaveLength(1);
  });

  it('confirm: the provider issues the cards, then answers 10001 → outcome unknown, no second confirm', async () => {
    const { client } = h.client();
    const { transactionId } = await client.initiateCardRequest({ cardId: '101', quantity: 2, transactionNumber: 5 });
    await h.setFaults({ afterCommit: { 'confirm-order': { action: 'error', times: 1 } } });
    const e = await rejection(client.confirmOrder({ transactionId, totalAmount: '19.98', paymentId: 'p5' }));
    expect(e).toMatchObject({ upstreamCode: 10001, outcomeUnknown: true, retrySafe: false });
    const { successful_confirms_by_transaction: counts } = (await h.control('GET', '/confirmations')) as {
      successful_confirms_by_transaction: Record<string, number>;
    };
    expect(counts[transactionId]).toBe(1);
    expect(await h.calls('confirm-order')).toHaveLength(1);
  });

  it('confirm: the provider commits and never answers → timeout, outcome unknown', async () => {
    // Initiate with the default timeout, so only the confirm depends on the short one (a loaded
    // machine must not turn a slow login or initiate into a different failure).
    const { transactionId } = await h.client().client.initiateCardRequest({ cardId: '101', quantity: 1, transactionNumber: 6 });
    const { client } = h.client({ timeoutMs: 300 });
    await h.setFaults({ afterCommit: { 'confirm-order': { action: 'hang', times: 1 } } });
    const e = await rejection(client.confirmOrder({ transactionId, totalAmount: '9.99', paymentId: 'p6' }));
    // The login of this client is a separate, earlier attempt; only the confirm may time out.
    expect(e).toMatchObject({ kind: 'timeout', endpoint: 'confirmOrder', outcomeUnknown: true, retrySafe: false });
    expect(e.message).toContain('UND_ERR_HEADERS_TIMEOUT');
  });

  it('a slow read beyond timeoutMs times out and is retried, then succeeds when the provider recovers', async () => {
    // Deterministic: the provider is made fast again inside the client's back-off, i.e. strictly
    // after the first attempt timed out and strictly before the retry is sent. The latency is far
    // beyond the timeout, so the first attempt cannot succeed however slow the machine is.
    const { client, records } = h.client({
      timeoutMs: 500,
      sleep: async () => {
        await h.setFaults({});
      },
    });
    await client.login();
    await h.setFaults({ endpointLatencyMs: { 'get-card-list': 60_000 } });
    expect((await client.getCardList()).length).toBeGreaterThan(0);
    expect(records.filter((r) => r.endpoint === 'getCardList').map((r) => r.errorKind ?? 'ok')).toEqual(['timeout', 'ok']);
    expect(await h.calls('get-card-list')).toHaveLength(1); // the timed-out attempt is still being delayed
  });

  it('busy mode (initiations refused with 10001) surfaces once, as an unknown outcome for the pipeline to reconcile', async () => {
    const { client } = h.client();
    await h.control('POST', '/busy', { active: true, reason: 'maintenance' });
    const e = await rejection(client.initiateCardRequest({ cardId: '101', quantity: 1, transactionNumber: 8 }));
    expect(e).toMatchObject({ upstreamCode: 10001, outcomeUnknown: true });
    expect(await h.calls('initiate-card-request')).toHaveLength(1);
  });

  it('close() during a back-off stops further retries', async () => {
    const holder: { close?: () => Promise<void> } = {};
    const { client } = h.client({ sleep: () => holder.close!() });
    holder.close = () => client.close();
    await client.login();
    await h.setFaults({ failNext: { 'get-card-list': 5 } });
    const e = await rejection(client.getCardList());
    expect(e).toMatchObject({ kind: 'network', requestSent: false });
    expect(e.message).toBe('getCardList: network: client closed');
    expect(await h.calls('get-card-list')).toHaveLength(1);
  });
});
