import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { call, control, login, startSandbox } from './helpers.js';

describe('sandbox auth (section 5)', () => {
  let sandbox: Sandbox;
  afterEach(async () => sandbox?.close());

  it('logs in with the default credentials and answers a string token with code "11111"', async () => {
    sandbox = await startSandbox();
    const res = await call(sandbox.url, 'login', { body: { user_name: 'sandbox-merchant', password: 'sandbox-private-key-not-secret' } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: true, code: '11111', token: expect.any(String) });
    expect((res.json.token as string).length).toBeGreaterThanOrEqual(20);
  });

  it('issues a different token on each login', async () => {
    sandbox = await startSandbox();
    const [a, b] = [await login(sandbox), await login(sandbox)];
    expect(a).not.toBe(b);
    // Both stay valid: the spec does not say a new login ends earlier sessions.
    for (const token of [a, b]) expect((await call(sandbox.url, 'get-card-list', { token })).json.status).toBe(true);
  });

  it('answers 10007 without user_name and 10008 without password, as numbers', async () => {
    sandbox = await startSandbox();
    const noUser = await call(sandbox.url, 'login', { body: { password: 'x' } });
    expect(noUser.json).toEqual({ status: false, code: 10007, error: expect.any(String) });
    const noPassword = await call(sandbox.url, 'login', { body: { user_name: 'sandbox-merchant' } });
    expect(noPassword.json).toMatchObject({ status: false, code: 10008 });
    expect(noPassword.status).toBe(200);
  });

  it('refuses wrong credentials with 10000 and accepts custom ones', async () => {
    sandbox = await startSandbox({ username: 'acme', privateKey: 'k-123' });
    const wrong = await call(sandbox.url, 'login', { body: { user_name: 'acme', password: 'nope' } });
    expect(wrong.json).toMatchObject({ status: false, code: 10000 });
    const right = await call(sandbox.url, 'login', { body: { user_name: 'acme', password: 'k-123' } });
    expect(right.json).toMatchObject({ status: true, code: '11111' });
  });

  it('takes the token in Authorization with or without Bearer, and requires a Token header', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    expect((await call(sandbox.url, 'get-card-list', { token, bearer: true })).json.status).toBe(true);
    expect((await call(sandbox.url, 'get-card-list', { token, bearer: false })).json.status).toBe(true);
    expect((await call(sandbox.url, 'get-card-list', { token, tokenHeader: null })).json).toMatchObject({ code: 10000 });
    // The token only in the Token header (one reading of the getting-started text) is not enough.
    expect((await call(sandbox.url, 'get-card-list', { tokenHeader: token })).json).toMatchObject({ code: 10000 });
  });

  it('answers 10000 for a missing, unknown or malformed token on every authenticated endpoint', async () => {
    sandbox = await startSandbox();
    const endpoints = ['get-card-list', 'get-card-details-list', 'get-balance-details', 'initiate-card-request', 'confirm-order'];
    for (const endpoint of endpoints) {
      expect((await call(sandbox.url, endpoint)).json, endpoint).toMatchObject({ status: false, code: 10000 });
      expect((await call(sandbox.url, endpoint, { token: 'not-a-token' })).json, endpoint).toMatchObject({ code: 10000 });
      expect((await call(sandbox.url, endpoint, { token: 'Bearer' })).json, endpoint).toMatchObject({ code: 10000 });
    }
  });

  it('expires tokens after tokenTtlMs on the sandbox clock', async () => {
    let clock = 1_700_000_000_000;
    sandbox = await startSandbox({ tokenTtlMs: 60_000, now: () => clock });
    const token = await login(sandbox);
    clock += 59_999;
    expect((await call(sandbox.url, 'get-card-list', { token })).json.status).toBe(true);
    clock += 1;
    expect((await call(sandbox.url, 'get-card-list', { token })).json).toMatchObject({ status: false, code: 10000 });
    const fresh = await login(sandbox);
    expect((await call(sandbox.url, 'get-card-list', { token: fresh })).json.status).toBe(true);
  });

  it('expires every token at once through the control API', async () => {
    sandbox = await startSandbox();
    const tokens = [await login(sandbox), await login(sandbox)];
    const res = await control<{ expired: number }>(sandbox, 'POST', '/tokens/expire');
    expect(res.json.expired).toBe(2);
    for (const token of tokens) expect((await call(sandbox.url, 'get-card-list', { token })).json).toMatchObject({ code: 10000 });
  });

  it('can make a login revoke earlier tokens (loginRevokesPreviousTokens)', async () => {
    sandbox = await startSandbox({ behaviour: { loginRevokesPreviousTokens: true } });
    const first = await login(sandbox);
    const second = await login(sandbox);
    expect((await call(sandbox.url, 'get-card-list', { token: first })).json).toMatchObject({ code: 10000 });
    expect((await call(sandbox.url, 'get-card-list', { token: second })).json.status).toBe(true);
  });

  it('refuses callers outside the IP allow-list with HTTP 403 and an error envelope, control API still reachable', async () => {
    sandbox = await startSandbox({ allowedIps: ['10.9.9.9'] });
    const res = await call(sandbox.url, 'login', { body: { user_name: 'sandbox-merchant', password: 'sandbox-private-key-not-secret' } });
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ status: false, code: 10000 });
    expect(res.json.token).toBeUndefined();
    const calls = await control<{ calls: Array<{ http_status: number; ip: string }> }>(sandbox, 'GET', '/calls');
    expect(calls.status).toBe(200);
    expect(calls.json.calls[0]).toMatchObject({ http_status: 403 });
  });

  it('refuses the control API to addresses outside controlAllowedIps', async () => {
    sandbox = await startSandbox({ controlAllowedIps: ['10.9.9.9'] });
    const res = await fetch(`${sandbox.controlUrl}/faults`);
    expect(res.status).toBe(403);
  });

  it('answers 10003 for a wrong HTTP method on every endpoint, before checking the token', async () => {
    sandbox = await startSandbox();
    const wrong: Array<[string, string]> = [
      ['login', 'GET'],
      ['get-card-list', 'POST'],
      ['get-card-details-list', 'GET'],
      ['get-balance-details', 'PUT'],
      ['initiate-card-request', 'GET'],
      ['confirm-order', 'DELETE'],
    ];
    for (const [endpoint, method] of wrong) {
      const res = await call(sandbox.url, endpoint, { method, body: method === 'GET' ? undefined : {} });
      expect(res.json, `${method} ${endpoint}`).toMatchObject({ status: false, code: 10003 });
    }
  });
});
