import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { call, control, initiate, login, startSandbox } from './helpers.js';

type Reservations = { reservations: Array<Record<string, unknown>> };
type Confirmations = { confirmations: Array<Record<string, unknown>>; successful_confirms_by_transaction: Record<string, number>; rejected: Array<Record<string, unknown>> };

async function balance(sandbox: Sandbox, token: string, cardId: number | string): Promise<number> {
  const res = await call(sandbox.url, 'get-balance-details', { token, body: { card_id: cardId } });
  return (res.json.data as Array<{ balance: number }>)[0]!.balance;
}

function confirmRaw(sandbox: Sandbox, token: string, transactionId: string, totalLiteral: string, paymentId = 'pay-1') {
  return call(sandbox.url, 'confirm-order', {
    token,
    rawBody: `{"transaction_id":${JSON.stringify(transactionId)},"total_amount":${totalLiteral},"payment_id":${JSON.stringify(paymentId)}}`,
  });
}

describe('sandbox orders (4.5, 4.6, section 3)', () => {
  let sandbox: Sandbox;
  afterEach(async () => sandbox?.close());

  it('initiates with a top-level transaction_id and no data array, reserving stock', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const res = await initiate(sandbox, token, 101, 2, 5001);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: true, code: '11111', transaction_id: expect.any(String) });
    expect(await balance(sandbox, token, 101)).toBe(48);
    const list = await control<Reservations>(sandbox, 'GET', '/reservations');
    expect(list.json.reservations).toEqual([
      expect.objectContaining({ transaction_id: res.json.transaction_id, transaction_number: 5001, card_id: '101', quantity: 2, status: 'pending', confirmed_count: 0 }),
    ]);
  });

  it('confirms with one card per reserved unit and makes the stock decrease permanent', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const { json } = await initiate(sandbox, token, '102', 3, 77);
    const transactionId = json.transaction_id as string;
    const res = await confirmRaw(sandbox, token, transactionId, '45');
    expect(res.json).toMatchObject({ status: true, code: '11111' });
    const cards = res.json.data as Array<Record<string, unknown>>;
    expect(cards).toHaveLength(3);
    for (const card of cards) {
      expect(Object.keys(card).sort()).toEqual(['card_code', 'card_number']);
      expect(card.card_code).toMatch(/^[A-Z2-9]{16}$/);
      expect(card.card_number).toMatch(/^SN\d{14}$/);
    }
    expect(new Set(cards.map((c) => c.card_code)).size).toBe(3);
    expect(await balance(sandbox, token, 102)).toBe(0);
    const conf = await control<Confirmations>(sandbox, 'GET', '/confirmations');
    expect(conf.json.successful_confirms_by_transaction).toEqual({ [transactionId]: 1 });
    expect(conf.json.confirmations[0]).toMatchObject({ payment_id: 'pay-1', total_amount_raw: '45', expected_total: '45', cards_count: 3, amount_matched: true });
    // Card codes are in-process only: the HTTP inspection shows serial numbers, never codes.
    expect(JSON.stringify(conf.json)).not.toContain(cards[0]!.card_code as string);
    expect(sandbox.control.cardsOf(transactionId).map((c) => c.cardCode)).toEqual(cards.map((c) => c.card_code));
  });

  it('answers 10006 when the quantity exceeds stock, with no reservation made', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    expect((await initiate(sandbox, token, 102, 4)).json).toEqual({ status: false, code: 10006, error: expect.any(String) });
    expect((await initiate(sandbox, token, 103, 1)).json).toMatchObject({ code: 10006 });
    expect(await balance(sandbox, token, 102)).toBe(3);
    expect((await control<Reservations>(sandbox, 'GET', '/reservations')).json.reservations).toHaveLength(0);
  });

  it('answers 10005 and 10002 for missing and unknown card ids on initiate', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    expect((await call(sandbox.url, 'initiate-card-request', { token, body: { quantiry: 1, transaction_number: 1 } })).json).toMatchObject({ code: 10005 });
    expect((await initiate(sandbox, token, 'psn-50', 1)).json).toMatchObject({ code: 10002 });
    expect((await initiate(sandbox, token, 'PSN-50', 1)).json).toMatchObject({ status: true });
  });

  it('rejects the spelling `quantity` with 10001 and reserves nothing', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const res = await call(sandbox.url, 'initiate-card-request', { token, body: { card_id: 101, quantity: 2, transaction_number: 9 } });
    expect(res.json).toMatchObject({ status: false, code: 10001 });
    expect(await balance(sandbox, token, 101)).toBe(50);
  });

  it('can instead ignore `quantity` and reserve one unit (misspelledQuantity=ignore)', async () => {
    sandbox = await startSandbox({ behaviour: { misspelledQuantity: 'ignore' } });
    const token = await login(sandbox);
    const res = await call(sandbox.url, 'initiate-card-request', { token, body: { card_id: 101, quantity: 2, transaction_number: 9 } });
    expect(res.json.status).toBe(true);
    expect(await balance(sandbox, token, 101)).toBe(49);
  });

  it('answers 10001 for an invalid quantiry or transaction_number', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    for (const body of [
      { card_id: 101, quantiry: 0, transaction_number: 1 },
      { card_id: 101, quantiry: 1.5, transaction_number: 1 },
      { card_id: 101, quantiry: 1 },
      { card_id: 101, quantiry: 1, transaction_number: 'abc' },
    ]) {
      expect((await call(sandbox.url, 'initiate-card-request', { token, body })).json, JSON.stringify(body)).toMatchObject({ code: 10001 });
    }
  });

  it('makes a second, separate reservation for a repeated transaction_number', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const first = await initiate(sandbox, token, 101, 1, 4242);
    const second = await initiate(sandbox, token, 101, 1, 4242);
    expect(second.json.transaction_id).not.toBe(first.json.transaction_id);
    expect(await balance(sandbox, token, 101)).toBe(48);
    const list = await control<Reservations>(sandbox, 'GET', '/reservations?transaction_number=4242');
    expect(list.json.reservations).toHaveLength(2);
  });

  it('can return the existing reservation for a repeated transaction_number (return-existing)', async () => {
    sandbox = await startSandbox({ behaviour: { repeatedTransactionNumber: 'return-existing' } });
    const token = await login(sandbox);
    const first = await initiate(sandbox, token, 101, 1, 4242);
    const second = await initiate(sandbox, token, 101, 1, 4242);
    expect(second.json.transaction_id).toBe(first.json.transaction_id);
    expect(await balance(sandbox, token, 101)).toBe(49);
  });

  it('expires pending reservations after reservationTtlMs and returns their stock', async () => {
    let clock = 1_700_000_000_000;
    sandbox = await startSandbox({ reservationTtlMs: 60_000, now: () => clock });
    const token = await login(sandbox);
    const { json } = await initiate(sandbox, token, 102, 2);
    expect(await balance(sandbox, token, 102)).toBe(1);
    clock += 60_000;
    expect(await balance(sandbox, token, 102)).toBe(3);
    const list = await control<Reservations>(sandbox, 'GET', '/reservations');
    expect(list.json.reservations[0]).toMatchObject({ transaction_id: json.transaction_id, status: 'expired' });
    expect((await confirmRaw(sandbox, token, json.transaction_id as string, '30')).json).toMatchObject({ status: false, code: 10001 });
  });

  it('expires reservations by itself on a short real TTL', async () => {
    sandbox = await startSandbox({ reservationTtlMs: 40 });
    const token = await login(sandbox);
    await initiate(sandbox, token, 102, 3);
    const [ended] = await sandbox.events.waitFor('reservation.ended');
    expect(ended.status).toBe('expired');
    expect(sandbox.state.catalog.cards.get('102')!.stock).toBe(3);
  });

  it('fails a confirm of an unknown, already confirmed or cancelled transaction (10001 by default)', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    expect((await confirmRaw(sandbox, token, 'TXN-unknown', '9.99')).json).toMatchObject({ status: false, code: 10001 });
    const { json } = await initiate(sandbox, token, 101, 1);
    const id = json.transaction_id as string;
    expect((await confirmRaw(sandbox, token, id, '9.99')).json.status).toBe(true);
    expect((await confirmRaw(sandbox, token, id, '9.99', 'pay-2')).json).toMatchObject({ status: false, code: 10001 });
    const other = (await initiate(sandbox, token, 101, 1)).json.transaction_id as string;
    expect((await control(sandbox, 'POST', `/reservations/${other}/cancel`)).status).toBe(200);
    expect((await confirmRaw(sandbox, token, other, '9.99')).json).toMatchObject({ code: 10001 });
    const conf = await control<Confirmations>(sandbox, 'GET', '/confirmations');
    expect(conf.json.successful_confirms_by_transaction).toEqual({ [id]: 1 });
    expect(conf.json.rejected.map((r) => r.reason)).toEqual(['invalid_transaction', 'invalid_transaction', 'invalid_transaction']);
  });

  it('can answer 10002 for an invalid transaction and replay the same cards on reconfirm', async () => {
    sandbox = await startSandbox({ behaviour: { invalidTransactionCode: 10002, reconfirm: 'same-cards' } });
    const token = await login(sandbox);
    expect((await confirmRaw(sandbox, token, 'TXN-unknown', '1')).json).toMatchObject({ code: 10002 });
    const id = (await initiate(sandbox, token, 101, 2)).json.transaction_id as string;
    const first = await confirmRaw(sandbox, token, id, '19.98');
    const again = await confirmRaw(sandbox, token, id, '19.98');
    expect(again.json.data).toEqual(first.json.data);
    const conf = await control<Confirmations>(sandbox, 'GET', '/confirmations');
    expect(conf.json.successful_confirms_by_transaction[id]).toBe(2);
    expect(conf.json.confirmations.map((c) => c.replay)).toEqual([false, true]);
  });

  it('compares total_amount exactly: 0.3 matches 3 × 0.10, 0.30000000000000004 is rejected and recorded', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const id = (await initiate(sandbox, token, 301, 3)).json.transaction_id as string;
    const bad = await confirmRaw(sandbox, token, id, '0.30000000000000004');
    expect(bad.json).toMatchObject({ status: false, code: 10001 });
    const good = await confirmRaw(sandbox, token, id, '0.3');
    expect(good.json.status).toBe(true);
    expect(good.json.data).toHaveLength(3);
    const conf = await control<Confirmations>(sandbox, 'GET', '/confirmations');
    expect(conf.json.rejected).toEqual([expect.objectContaining({ transaction_id: id, reason: 'amount_mismatch', total_amount_raw: '0.30000000000000004', code: 10001 })]);
    expect(conf.json.confirmations[0]).toMatchObject({ total_amount_raw: '0.3', expected_total: '0.3' });
    const calls = await control<{ calls: Array<{ raw_body: string }> }>(sandbox, 'GET', '/calls?endpoint=confirm-order');
    expect(calls.json.calls.map((c) => c.raw_body)).toEqual([
      expect.stringContaining('"total_amount":0.30000000000000004,'),
      expect.stringContaining('"total_amount":0.3,'),
    ]);
  });

  it('accepts equivalent literals (0.30, 3e-1) and, with amountMismatch=accept, records a mismatch', async () => {
    sandbox = await startSandbox({ behaviour: { amountMismatch: 'accept' } });
    const token = await login(sandbox);
    const a = (await initiate(sandbox, token, 301, 3)).json.transaction_id as string;
    const b = (await initiate(sandbox, token, 301, 3)).json.transaction_id as string;
    expect((await confirmRaw(sandbox, token, a, '3e-1')).json.status).toBe(true);
    expect((await confirmRaw(sandbox, token, b, '0.31')).json.status).toBe(true);
    const conf = await control<Confirmations>(sandbox, 'GET', '/confirmations');
    expect(conf.json.confirmations.map((c) => c.amount_matched)).toEqual([true, false]);
  });

  it('answers 10001 for confirm without payment_id, without total_amount or with a quoted amount', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const id = (await initiate(sandbox, token, 101, 1)).json.transaction_id as string;
    for (const body of [{ transaction_id: id, total_amount: 9.99 }, { transaction_id: id, payment_id: 'p' }, { transaction_id: id, payment_id: 'p', total_amount: '9.99' }, {}]) {
      expect((await call(sandbox.url, 'confirm-order', { token, body })).json, JSON.stringify(body)).toMatchObject({ status: false, code: 10001 });
    }
    expect(sandbox.state.reservations.get(id)!.status).toBe('pending');
  });

  it('treats a malformed JSON body as 10001 and a non-JSON content type as an empty body', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    expect((await call(sandbox.url, 'get-balance-details', { token, rawBody: '{"card_id": 101' })).json).toMatchObject({ code: 10001 });
    expect((await call(sandbox.url, 'get-balance-details', { token, rawBody: '{"card_id":101}', contentType: 'text/plain' })).json).toMatchObject({ code: 10005 });
  });

  it('never oversells under concurrent initiations', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => initiate(sandbox, token, 102, 1, i)));
    expect(answers.filter((a) => a.json.status === true)).toHaveLength(3);
    expect(answers.filter((a) => a.json.code === 10006)).toHaveLength(7);
    expect(await balance(sandbox, token, 102)).toBe(0);
  });
});
