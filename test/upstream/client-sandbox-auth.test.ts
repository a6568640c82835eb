import { describe, expect, it } from 'vitest';
import { rewritingDispatcher, useHarness } from './sandbox-harness.js';

describe('session token against the sandbox', () => {
  const h = useHarness('each');

  it('logs in once and reuses the token for every call', async () => {
    const { client } = h.client();
    await client.getCardList();
    await client.getCardDetailsList('1');
    await client.getBalance('101');
    expect(await h.calls('login')).toHaveLength(1);
  });

  it('50 concurrent first calls share one login', async () => {
    const { client } = h.client();
    const results = await Promise.all(Array.from({ length: 50 }, () => client.getBalance('101')));
    expect(results.every((r) => r.balance === 50)).toBe(true);
    expect(await h.calls('login')).toHaveLength(1);
  });

  it('token expiry mid-run: one re-login, the rejected call repeated once, the run continues', async () => {
    const { client, records } = h.client();
    await client.getCardList();
    expect(await h.expireTokens()).toBe(1);
    const details = await client.getCardDetailsList('2');
    expect(details.map((d) => d.cardId)).toEqual(['201', 'PSN-50']);
    await client.getBalance('201');

    expect(await h.calls('login')).toHaveLength(2);
    expect((await h.calls('get-card-details-list')).map((c) => c.provider_code)).toEqual([10000, '11111']);
    expect(records.map((r) => `${r.endpoint}#${r.attempt}:${r.upstreamCode}`)).toEqual([
      'login#1:11111',
      'getCardList#1:11111',
      'getCardDetailsList#1:10000',
      'login#1:11111',
      'getCardDetailsList#2:11111',
      'getBalance#1:11111',
    ]);
  });

  it('50 concurrent calls after expiry cause exactly one login, and all succeed', async () => {
    const { client } = h.client();
    await client.getCardList();
    await h.expireTokens();
    // Slow the provider a little so the 50 requests are all in flight with the stale token together.
    await h.setFaults({ endpointLatencyMs: { 'get-balance-details': 20 } });
    const results = await Promise.all(Array.from({ length: 50 }, () => client.getBalance('201')));
    expect(results).toHaveLength(50);
    expect(results.every((r) => r.balance === 25)).toBe(true);

    expect(await h.calls('login')).toHaveLength(2);
    const balanceCalls = await h.calls('get-balance-details');
    expect(balanceCalls.filter((c) => c.provider_code === 10000)).toHaveLength(50);
    expect(balanceCalls.filter((c) => c.provider_code === '11111')).toHaveLength(50);
  });

  it('a write rejected with 10000 is re-sent once after re-login: exactly one reservation', async () => {
    const { client } = h.client();
    await client.login();
    await h.expireTokens();
    const { transactionId } = await client.initiateCardRequest({ cardId: '201', quantity: 2, transactionNumber: 77 });
    const initiates = await h.calls('initiate-card-request');
    expect(initiates.map((c) => c.provider_code)).toEqual([10000, '11111']);
    const { reservations } = (await h.control('GET', '/reservations?transaction_number=77')) as { reservations: Array<{ transaction_id: string }> };
    expect(reservations.map((r) => r.transaction_id)).toEqual([transactionId]);
  });

  it('a second 10000 right after a fresh login is returned, not looped on', async () => {
    // Every get-card-list reaches the sandbox with a token it never issued: 10000 each time.
    const rw = rewritingDispatcher((o) =>
      o.path.endsWith('get-card-list') ? { ...o, headers: { ...(o.headers as Record<string, string>), authorization: 'forged' } } : o,
    );
    const { client } = h.client({ dispatcher: rw.dispatcher });
    const error = await client.getCardList().catch((e: unknown) => e);
    await rw.close();
    expect(error).toMatchObject({ kind: 'provider', upstreamCode: 10000, endpoint: 'getCardList', retrySafe: true, outcomeUnknown: false });
    expect(await h.calls('login')).toHaveLength(2);
    expect(await h.calls('get-card-list')).toHaveLength(2);
  });

  it('when a login revokes earlier tokens, concurrent clients sharing one cache still converge', async () => {
    await h.control('PUT', '/behaviour', { loginRevokesPreviousTokens: true });
    const { client } = h.client();
    await client.getCardList();
    await client.login(); // revokes nothing we still hold: the cache now has the new token
    await Promise.all(Array.from({ length: 10 }, () => client.getBalance('101')));
    expect((await h.calls('get-balance-details')).every((c) => c.provider_code === '11111')).toBe(true);
  });

  it('tokenMaxAgeMs replaces an old token before the provider has to reject it', async () => {
    let now = 1_000_000;
    const { client } = h.client({ tokenMaxAgeMs: 60_000, now: () => now });
    await client.getCardList();
    now += 59_999;
    await client.getCardList();
    expect(await h.calls('login')).toHaveLength(1);
    now += 1;
    await client.getCardList();
    expect(await h.calls('login')).toHaveLength(2);
    expect((await h.calls('get-card-list')).every((c) => c.provider_code === '11111')).toBe(true);
  });

  it('authorizationScheme bearer sends "Bearer <token>"', async () => {
    const { client } = h.client({ authorizationScheme: 'bearer' });
    await client.getCardList();
    const [call] = await h.calls('get-card-list');
    expect(call).toMatchObject({ authorization: 'bearer', token_header_present: true, provider_code: '11111' });
  });

  it('after close(), calls fail as never sent (safe to repeat elsewhere), even writes', async () => {
    const { client } = h.client();
    await client.getCardList();
    await client.close();
    const error = await client.initiateCardRequest({ cardId: '101', quantity: 1, transactionNumber: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'network', requestSent: false, retrySafe: true, outcomeUnknown: false });
    expect(await h.calls('initiate-card-request')).toHaveLength(0);
    await client.close();
  });
});
