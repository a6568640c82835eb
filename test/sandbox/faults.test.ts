import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { call, control, initiate, login, startSandbox } from './helpers.js';

type Reservations = { reservations: Array<Record<string, unknown>> };
type Calls = { calls: Array<Record<string, unknown>> };

describe('sandbox fault injection', () => {
  let sandbox: Sandbox;
  afterEach(async () => sandbox?.close());

  it('adds global latency, overridden per endpoint', async () => {
    sandbox = await startSandbox({ faults: { latencyMs: 150, endpointLatencyMs: { login: 0 } } });
    let t = performance.now();
    const token = await login(sandbox);
    expect(performance.now() - t).toBeLessThan(140);
    t = performance.now();
    expect((await call(sandbox.url, 'get-card-list', { token })).json.status).toBe(true);
    expect(performance.now() - t).toBeGreaterThanOrEqual(145);
  });

  it('fails the next N calls of an endpoint with 10001 before doing any work', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const put = await control(sandbox, 'PUT', '/faults', { failNext: { 'initiate-card-request': 2 } });
    expect(put.status).toBe(200);
    expect((await initiate(sandbox, token, 101, 1)).json).toMatchObject({ status: false, code: 10001 });
    expect((await initiate(sandbox, token, 101, 1)).json).toMatchObject({ status: false, code: 10001 });
    expect((await initiate(sandbox, token, 101, 1)).json.status).toBe(true);
    expect((await control<Reservations>(sandbox, 'GET', '/reservations')).json.reservations).toHaveLength(1);
    expect((await control(sandbox, 'GET', '/faults')).json.failNext).toEqual({});
  });

  it('fails at the configured rate, using the injected randomness', async () => {
    const draws = [0.1, 0.9, 0.2, 0.8];
    sandbox = await startSandbox({ faults: { errorRate: { 'get-card-list': 0.5 } }, random: () => draws.shift() ?? 0.99 });
    const token = await login(sandbox);
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await call(sandbox.url, 'get-card-list', { token })).json.code);
    expect(codes).toEqual([10001, '11111', 10001, '11111']);
  });

  it('answers with mapped HTTP statuses when errorHttpStatus=mapped, 200 by default', async () => {
    sandbox = await startSandbox({ errorHttpStatus: 'mapped' });
    expect((await call(sandbox.url, 'get-card-list')).status).toBe(401);
    expect((await call(sandbox.url, 'login', { body: {} })).status).toBe(400);
    expect((await call(sandbox.url, 'login', { method: 'GET' })).status).toBe(405);
    await control(sandbox, 'PUT', '/behaviour', { errorHttpStatus: 200 });
    const res = await call(sandbox.url, 'get-card-list');
    expect(res.status).toBe(200);
    expect(res.json.code).toBe(10000);
  });

  it('drops the connection after the reservation is committed: caller gets a socket error, reservation exists', async () => {
    sandbox = await startSandbox({ faults: { afterCommit: { 'initiate-card-request': { action: 'drop', times: 1 } } } });
    const token = await login(sandbox);
    const committed = sandbox.events.waitFor('reservation.committed');
    await expect(initiate(sandbox, token, 102, 2, 31337)).rejects.toThrow(/fetch failed/);
    const [reservation] = await committed;
    expect(reservation).toMatchObject({ transactionNumber: 31337, quantity: 2, status: 'pending' });
    const list = await control<Reservations>(sandbox, 'GET', '/reservations');
    expect(list.json.reservations).toEqual([expect.objectContaining({ transaction_number: 31337, status: 'pending', quantity: 2 })]);
    expect(sandbox.state.catalog.cards.get('102')!.stock).toBe(1);
    const calls = await control<Calls>(sandbox, 'GET', '/calls?endpoint=initiate-card-request');
    expect(calls.json.calls[0]).toMatchObject({ outcome: 'dropped', http_status: null, transaction_id: reservation.transactionId });
    // times: 1 is consumed; the next call is answered.
    expect((await initiate(sandbox, token, 102, 1)).json.status).toBe(true);
  });

  it('drops the connection after a confirmation is committed: payment taken, caller never learns the cards', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const id = (await initiate(sandbox, token, 101, 1)).json.transaction_id as string;
    sandbox.control.setFaults({ afterCommit: { 'confirm-order': { action: 'drop' } } });
    await expect(call(sandbox.url, 'confirm-order', { token, body: { transaction_id: id, total_amount: 9.99, payment_id: 'p1' } })).rejects.toThrow();
    const conf = await control<{ successful_confirms_by_transaction: Record<string, number> }>(sandbox, 'GET', '/confirmations');
    expect(conf.json.successful_confirms_by_transaction).toEqual({ [id]: 1 });
    expect(sandbox.state.reservations.get(id)!.status).toBe('confirmed');
  });

  it('answers 10001 although the reservation was committed (afterCommit error)', async () => {
    sandbox = await startSandbox({ faults: { afterCommit: { 'initiate-card-request': { action: 'error' } } } });
    const token = await login(sandbox);
    expect((await initiate(sandbox, token, 101, 1)).json).toMatchObject({ status: false, code: 10001 });
    expect((await control<Reservations>(sandbox, 'GET', '/reservations')).json.reservations).toEqual([expect.objectContaining({ status: 'pending' })]);
  });

  it('hangs after commit until the caller gives up, and close() still finishes', async () => {
    sandbox = await startSandbox({ faults: { afterCommit: { 'initiate-card-request': { action: 'hang' } } } });
    const token = await login(sandbox);
    const res = fetch(`${sandbox.url}/api-service/card/initiate-card-request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', token: 'x', authorization: `Bearer ${token}` },
      body: JSON.stringify({ card_id: 101, quantiry: 1, transaction_number: 1 }),
      signal: AbortSignal.timeout(300),
    });
    await expect(res).rejects.toThrow(/abort|timeout/i);
    expect(sandbox.state.reservations.size).toBe(1);
    expect(sandbox.state.calls.at(-1)).toMatchObject({ outcome: 'hung' });
    const t = performance.now();
    await sandbox.close();
    expect(performance.now() - t).toBeLessThan(1_000);
  });

  it('delays the answer after commit; the reservation exists before the answer arrives', async () => {
    sandbox = await startSandbox({ faults: { afterCommit: { 'initiate-card-request': { action: 'delay', delayMs: 200 } } } });
    const token = await login(sandbox);
    const answer = initiate(sandbox, token, 101, 1);
    await sandbox.events.waitFor('reservation.committed');
    expect(sandbox.state.reservations.size).toBe(1);
    const t = performance.now();
    expect((await answer).json.status).toBe(true);
    expect(performance.now() - t).toBeGreaterThan(100);
  });

  it('refuses new initiations with 10001 in busy mode, until revoked or until passes', async () => {
    let clock = Date.parse('2030-01-01T00:00:00Z');
    sandbox = await startSandbox({ now: () => clock });
    const token = await login(sandbox);
    const on = await control(sandbox, 'POST', '/busy', { active: true, reason: 'maintenance', until: '2030-01-01T00:10:00Z' });
    expect(on.json).toMatchObject({ active: true, reason: 'maintenance', until: '2030-01-01T00:10:00.000Z' });
    expect((await initiate(sandbox, token, 101, 1)).json).toMatchObject({ status: false, code: 10001 });
    expect((await call(sandbox.url, 'get-balance-details', { token, body: { card_id: 101 } })).json.status).toBe(true);
    clock += 10 * 60_000;
    expect((await initiate(sandbox, token, 101, 1)).json.status).toBe(true);
    expect((await control(sandbox, 'GET', '/busy')).json.active).toBe(false);
    await control(sandbox, 'POST', '/busy', { active: true });
    expect((await initiate(sandbox, token, 101, 1)).json.code).toBe(10001);
    await control(sandbox, 'POST', '/busy', { active: false });
    expect((await initiate(sandbox, token, 101, 1)).json.status).toBe(true);
  });

  it('can delay initiations in busy mode instead of refusing them', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    await control(sandbox, 'POST', '/busy', { active: true, mode: 'delay', delayMs: 200 });
    const t = performance.now();
    expect((await initiate(sandbox, token, 101, 1)).json.status).toBe(true);
    expect(performance.now() - t).toBeGreaterThanOrEqual(190);
  });

  it('rejects invalid fault settings instead of ignoring them', async () => {
    sandbox = await startSandbox();
    expect((await control(sandbox, 'PUT', '/faults', { errorRate: { 'get-card-lst': 1 } })).status).toBe(400);
    expect((await control(sandbox, 'PUT', '/faults', { errorRate: { login: 2 } })).status).toBe(400);
    expect((await control(sandbox, 'PUT', '/faults', { afterCommit: { login: { action: 'drop' } } })).status).toBe(400);
    expect((await control(sandbox, 'GET', '/faults')).json).toEqual({ latencyMs: 0, endpointLatencyMs: {}, errorRate: {}, failNext: {}, afterCommit: {} });
  });
});
