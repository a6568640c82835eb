import { describe, expect, it } from 'vitest';
import { UPSTREAM_CODES, describeUpstreamCode } from '../../src/upstream/codes.js';
import { UPSTREAM_ERROR_KINDS, UpstreamError } from '../../src/upstream/errors.js';
import { isUpstreamError } from '../../src/upstream/index.js';

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
});
