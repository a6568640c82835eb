import { describe, expect, it } from 'vitest';
import { UPSTREAM_CODES, describeUpstreamCode } from '../../src/upstream/codes.js';
import { UPSTREAM_ERROR_KINDS, UpstreamError } from '../../src/upstream/errors.js';
import { isUpstreamError, salvageOf } from '../../src/upstream/index.js';
import { captureLogger } from './helpers.js';

describe('UpstreamError', () => {
  it('has a stable list of kinds', () => {
    expect(UPSTREAM_ERROR_KINDS).toEqual(['provider', 'timeout', 'network', 'malformed', 'invalid_request']);
  });

  it('every documented code has its own description', () => {
    for (const code of Object.values(UPSTREAM_CODES)) expect(describeUpstreamCode(code)).not.toBe('undocumented provider code');
    expect(describeUpstreamCode(10004)).toBe('undocumented provider code');
  });

  it('derives retrySafe/outcomeUnknown from the policy and keeps the provider text apart from the message', () => {
    const e = new UpstreamError({
      kind: 'provider',
      endpoint: 'confirmOrder',
      upstreamCode: 10001,
      httpStatus: 200,
      requestSent: true,
      providerMessage: 'x'.repeat(500),
    });
    expect(e).toMatchObject({ name: 'UpstreamError', retrySafe: false, outcomeUnknown: true });
    expect(e.message).toBe('confirmOrder: provider error 10001 (error while processing the request) [HTTP 200]');
    expect(e.providerMessage).toHaveLength(200);
    expect(isUpstreamError(e)).toBe(true);
    expect(isUpstreamError(new Error('x'))).toBe(false);
  });

  it('formats non-provider kinds with their detail', () => {
    const e = new UpstreamError({ kind: 'invalid_request', endpoint: 'confirmOrder', requestSent: false, detail: 'totalAmount must not be negative' });
    expect(e.message).toBe('confirmOrder: invalid request: totalAmount must not be negative');
  });

  describe('what serializers see', () => {
    const make = () =>
      new UpstreamError({
        kind: 'provider',
        endpoint: 'confirmOrder',
        upstreamCode: 10001,
        httpStatus: 200,
        requestSent: true,
        providerMessage: 'bad token tok-ECHOED-SECRET for user pk-ECHOED-KEY',
        salvage: { transactionId: 'TX-SALVAGED', cards: [{ cardCode: 'CODE-SALVAGED', cardNumber: 'N-1' }] },
      });

    it('providerMessage and salvage are readable but not enumerable', () => {
      const e = make();
      expect(e.providerMessage).toBe('bad token tok-ECHOED-SECRET for user pk-ECHOED-KEY');
      expect(e.salvage).toEqual({ transactionId: 'TX-SALVAGED', cards: [{ cardCode: 'CODE-SALVAGED', cardNumber: 'N-1' }] });
      expect(salvageOf(e)).toBe(e.salvage);
      expect(Object.keys(e)).not.toContain('providerMessage');
      expect(Object.keys(e)).not.toContain('salvage');
      expect(Object.getOwnPropertyDescriptor(e, 'providerMessage')).toMatchObject({ enumerable: false, writable: false });
      expect(Object.getOwnPropertyDescriptor(e, 'salvage')).toMatchObject({ enumerable: false, writable: false });
    });

    it('JSON.stringify and a spread copy contain neither', () => {
      const e = make();
      for (const text of [JSON.stringify(e), JSON.stringify({ ...e }), JSON.stringify({ err: e }), String(e)]) {
        expect(text).not.toMatch(/ECHOED|SALVAGED|providerMessage|salvage/);
      }
    });

    it('a pino log line of { err } contains neither', () => {
      const log = captureLogger();
      const e = make();
      log.logger.error({ err: e }, 'purchase step failed');
      log.logger.warn({ err: new UpstreamError({ kind: 'malformed', endpoint: 'initiateCardRequest', requestSent: true, cause: e }) }, 'wrapped');
      const [line, wrapped] = log.lines().map((l) => JSON.parse(l) as { err: Record<string, unknown> });
      expect(line?.err).toMatchObject({ type: 'UpstreamError', kind: 'provider', upstreamCode: 10001, outcomeUnknown: true });
      expect(wrapped?.err).toMatchObject({ type: 'UpstreamError', kind: 'malformed' });
      expect(log.text()).not.toMatch(/ECHOED|SALVAGED|providerMessage|salvage/);
    });

    it('salvage makes a write outcome unknown; empty salvage is dropped; salvageOf ignores other values', () => {
      const e = new UpstreamError({ kind: 'provider', endpoint: 'initiateCardRequest', upstreamCode: 10006, requestSent: true, salvage: { transactionId: 'T' } });
      expect(e).toMatchObject({ outcomeUnknown: true, retrySafe: false });
      const empty = new UpstreamError({ kind: 'provider', endpoint: 'initiateCardRequest', upstreamCode: 10006, requestSent: true, salvage: { cards: [] } });
      expect(empty.salvage).toBeUndefined();
      expect(empty).toMatchObject({ outcomeUnknown: false });
      expect(salvageOf(new Error('x'))).toBeUndefined();
      expect(salvageOf({ salvage: { transactionId: 'T' } })).toBeUndefined();
    });
  });
});
