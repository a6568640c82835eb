import { describe, expect, it } from 'vitest';
import { UPSTREAM_CODES } from '../../src/upstream/codes.js';
import { UPSTREAM_ENDPOINTS, type UpstreamEndpoint } from '../../src/upstream/endpoints.js';
import { backoffDelayMs, classifyFailure, shouldRetry, type FailureFacts } from '../../src/upstream/retry-policy.js';

const READS: UpstreamEndpoint[] = ['login', 'getCardList', 'getCardDetailsList', 'getBalance'];
const WRITES: UpstreamEndpoint[] = ['initiateCardRequest', 'confirmOrder'];
const PERMANENT = [10002, 10003, 10005, 10006, 10007, 10008];

const provider = (endpoint: UpstreamEndpoint, upstreamCode: number): FailureFacts => ({
  endpoint,
  kind: 'provider',
  upstreamCode,
  requestSent: true,
});

describe('classifyFailure', () => {
  it('covers every endpoint exactly once across reads and writes', () => {
    expect([...READS, ...WRITES].sort()).toEqual([...UPSTREAM_ENDPOINTS].sort());
  });

  it.each(READS)('%s: 10001 is retried in the client and safe to repeat', (endpoint) => {
    expect(classifyFailure(provider(endpoint, 10001))).toEqual({
      retryInClient: true,
      reauthenticate: false,
      retrySafe: true,
      outcomeUnknown: false,
    });
  });

  it.each(WRITES)('%s: 10001 is never retried and its outcome is unknown', (endpoint) => {
    expect(classifyFailure(provider(endpoint, 10001))).toEqual({
      retryInClient: false,
      reauthenticate: false,
      retrySafe: false,
      outcomeUnknown: true,
    });
  });

  it.each([...READS, ...WRITES].flatMap((e) => PERMANENT.map((c) => [e, c] as const)))(
    '%s: permanent code %i is neither retried nor safe, and nothing was committed',
    (endpoint, code) => {
      expect(classifyFailure(provider(endpoint, code))).toEqual({
        retryInClient: false,
        reauthenticate: false,
        retrySafe: false,
        outcomeUnknown: false,
      });
    },
  );

  it.each([...READS.filter((e) => e !== 'login'), ...WRITES])('%s: 10000 re-authenticates, even a write', (endpoint) => {
    const c = classifyFailure(provider(endpoint, UPSTREAM_CODES.incorrectToken));
    expect(c).toEqual({ retryInClient: false, reauthenticate: true, retrySafe: true, outcomeUnknown: false });
  });

  it('login: 10000 (e.g. unregistered IP) neither loops into another login nor counts as safe to repeat', () => {
    expect(classifyFailure(provider('login', 10000))).toEqual({
      retryInClient: false,
      reauthenticate: false,
      retrySafe: false,
      outcomeUnknown: false,
    });
  });

  it('an undocumented code is not retried; on a write its outcome is unknown', () => {
    expect(classifyFailure(provider('getBalance', 10004))).toMatchObject({ retryInClient: false, outcomeUnknown: false });
    expect(classifyFailure(provider('confirmOrder', 99999))).toMatchObject({ retryInClient: false, retrySafe: false, outcomeUnknown: true });
  });

  it.each(['timeout', 'network'] as const)('%s after sending: read retried, write unknown and not retried', (kind) => {
    expect(classifyFailure({ endpoint: 'getCardList', kind, requestSent: true })).toMatchObject({ retryInClient: true, retrySafe: true });
    for (const endpoint of WRITES) {
      expect(classifyFailure({ endpoint, kind, requestSent: true })).toEqual({
        retryInClient: false,
        reauthenticate: false,
        retrySafe: false,
        outcomeUnknown: true,
      });
    }
  });

  it('a connect failure (never sent) is safe to repeat for writes, but the client still does not repeat them', () => {
    for (const endpoint of WRITES) {
      expect(classifyFailure({ endpoint, kind: 'timeout', requestSent: false })).toEqual({
        retryInClient: false,
        reauthenticate: false,
        retrySafe: true,
        outcomeUnknown: false,
      });
    }
    expect(classifyFailure({ endpoint: 'login', kind: 'network', requestSent: false }).retryInClient).toBe(true);
  });

  it('malformed: reads retried only for 5xx/429 pages; writes always unknown', () => {
    expect(classifyFailure({ endpoint: 'getBalance', kind: 'malformed', httpStatus: 502, requestSent: true }).retryInClient).toBe(true);
    expect(classifyFailure({ endpoint: 'getBalance', kind: 'malformed', httpStatus: 429, requestSent: true }).retryInClient).toBe(true);
    expect(classifyFailure({ endpoint: 'getBalance', kind: 'malformed', httpStatus: 200, requestSent: true })).toMatchObject({
      retryInClient: false,
      retrySafe: false,
    });
    for (const httpStatus of [200, 404, 502]) {
      expect(classifyFailure({ endpoint: 'initiateCardRequest', kind: 'malformed', httpStatus, requestSent: true })).toMatchObject({
        retryInClient: false,
        retrySafe: false,
        outcomeUnknown: true,
      });
    }
  });

  it('invalid_request is nothing sent, nothing to retry', () => {
    expect(classifyFailure({ endpoint: 'confirmOrder', kind: 'invalid_request', requestSent: false })).toEqual({
      retryInClient: false,
      reauthenticate: false,
      retrySafe: false,
      outcomeUnknown: false,
    });
  });
});

describe('backoffDelayMs', () => {
  const settings = { baseDelayMs: 100, maxDelayMs: 1_000, jitter: 'none' as const };

  it('doubles from the base and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((r) => backoffDelayMs(r, settings))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('full jitter draws uniformly below the exponential cap', () => {
    const full = { ...settings, jitter: 'full' as const };
    expect(backoffDelayMs(3, full, () => 0)).toBe(0);
    expect(backoffDelayMs(3, full, () => 0.5)).toBe(200);
    expect(backoffDelayMs(3, full, () => 0.999)).toBe(399);
    expect(backoffDelayMs(10, full, () => 0.999)).toBe(999);
  });
});

describe('shouldRetry', () => {
  it('stops after maxAttempts and never retries what the policy forbids', () => {
    const retryable = classifyFailure(provider('getCardList', 10001));
    expect(shouldRetry(retryable, 1, 3)).toBe(true);
    expect(shouldRetry(retryable, 2, 3)).toBe(true);
    expect(shouldRetry(retryable, 3, 3)).toBe(false);
    expect(shouldRetry(classifyFailure(provider('confirmOrder', 10001)), 1, 10)).toBe(false);
  });
});

describe('classifyFailure with salvage (a refused write answer that named a transaction or carried codes)', () => {
  const salvage = { transactionId: 'T1' };
  const cases: FailureFacts[] = WRITES.flatMap((endpoint) => [
    { endpoint, kind: 'provider', upstreamCode: 10000, requestSent: true, salvage },
    { endpoint, kind: 'provider', upstreamCode: 10006, requestSent: true, salvage },
    { endpoint, kind: 'provider', upstreamCode: 10001, requestSent: true, salvage },
    { endpoint, kind: 'malformed', httpStatus: 200, requestSent: true, salvage: { cards: [{ cardCode: 'C', cardNumber: '' }] } },
  ]);
  it.each(cases)('$endpoint $kind $upstreamCode: outcome unknown, never repeated (not even after a re-login)', (facts) => {
    expect(classifyFailure(facts)).toEqual({ retryInClient: false, reauthenticate: false, retrySafe: false, outcomeUnknown: true });
  });

  it('reads ignore salvage, and an empty salvage changes nothing', () => {
    expect(classifyFailure({ ...provider('getBalance', 10001), salvage })).toEqual(classifyFailure(provider('getBalance', 10001)));
    expect(classifyFailure({ ...provider('confirmOrder', 10006), salvage: { cards: [] } })).toEqual(classifyFailure(provider('confirmOrder', 10006)));
  });
});
