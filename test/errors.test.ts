import { describe, expect, it } from 'vitest';
import { AppError, ERROR_CODES, ERROR_STATUS } from '../src/errors.js';
import { toProblem } from '../src/platform/http/error-handler.js';

const request = { id: 'req-1' } as never;

describe('application errors', () => {
  it('maps every code to an HTTP error status', () => {
    expect(ERROR_CODES.length).toBeGreaterThan(10);
    for (const code of ERROR_CODES) {
      expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
      const status = ERROR_STATUS[code];
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
      expect(new AppError(code, 'x').status).toBe(status);
    }
  });

  it('turns an AppError into problem details with its code and details', () => {
    const { body } = toProblem(new AppError('price_changed', 'The price changed.', { details: { currentUnitPrice: '9.99' } }), request);
    expect(body).toMatchObject({ type: 'about:blank', title: 'Conflict', status: 409, code: 'price_changed', detail: 'The price changed.', currentUnitPrice: '9.99', requestId: 'req-1' });
  });

  it('never shows the message of a 5xx, nor of an unexpected error', () => {
    const internal = toProblem(new AppError('upstream_unavailable', 'token abc123 rejected by 10.0.0.5'), request).body;
    expect(internal.status).toBe(502);
    expect(JSON.stringify(internal)).not.toContain('abc123');
    const unexpected = toProblem(new TypeError('cannot read properties of undefined (reading "secret")'), request).body;
    expect(unexpected).toMatchObject({ status: 500, code: 'internal_error' });
    expect(JSON.stringify(unexpected)).not.toContain('secret');
  });
});
