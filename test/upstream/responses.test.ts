import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/upstream/errors.js';
import { interpretResponse } from '../../src/upstream/responses.js';
import {
  balanceSchema,
  cardDetailsListSchema,
  cardListSchema,
  confirmSchema,
  initiateSchema,
  loginSchema,
} from '../../src/upstream/schemas.js';

function fail(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error('expected an UpstreamError');
}

const ok = (extra: object) => JSON.stringify({ status: true, code: '11111', ...extra });

describe('interpretResponse', () => {
  it('accepts the success code as a string or a number', () => {
    expect(interpretResponse('login', 200, ok({ token: 't' }), loginSchema)).toEqual({ token: 't' });
    expect(interpretResponse('login', 200, JSON.stringify({ status: true, code: 11111, token: 't' }), loginSchema)).toEqual({ token: 't' });
  });

  it.each([
    [10006, 200],
    ['10006', 200],
    [10006, 400],
    [10006, 500],
  ])('an error envelope with code %j and HTTP %i is a provider error', (code, httpStatus) => {
    const e = fail(() =>
      interpretResponse('initiateCardRequest', httpStatus, JSON.stringify({ status: false, code, error: 'Insufficient Balance' }), initiateSchema),
    );
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10006, httpStatus, providerMessage: 'Insufficient Balance' });
    expect(e.outcomeUnknown).toBe(false);
    expect(e.message).toBe(`initiateCardRequest: provider error 10006 (insufficient balance) [HTTP ${httpStatus}]`);
  });

  it('branches on code, not on status: status true with an error code is still an error', () => {
    const e = fail(() => interpretResponse('getBalance', 200, JSON.stringify({ status: true, code: 10005 }), balanceSchema));
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10005 });
  });

  it('a success code with status false is malformed', () => {
    const e = fail(() => interpretResponse('login', 200, JSON.stringify({ status: false, code: '11111', token: 't' }), loginSchema));
    expect(e.kind).toBe('malformed');
  });

  it.each([
    ['', 'empty body'],
    ['<html><body>502 Bad Gateway</body></html>', 'body is not JSON'],
    ['{"status":true,', 'body is not JSON'],
  ])('non-JSON %j is malformed', (body, detail) => {
    const e = fail(() => interpretResponse('getCardList', 502, body, cardListSchema));
    expect(e).toMatchObject({ kind: 'malformed', httpStatus: 502, retrySafe: true });
    expect(e.message).toContain(detail);
  });

  it('JSON without a code is malformed', () => {
    expect(fail(() => interpretResponse('getCardList', 200, '[1,2]', cardListSchema)).kind).toBe('malformed');
    expect(fail(() => interpretResponse('getCardList', 200, '{"status":true}', cardListSchema)).message).toMatch(/envelope code/);
  });

  it('parses vendors and denominations, accepting numeric ids and exact decimal amounts', () => {
    const vendors = interpretResponse(
      'getCardList',
      200,
      ok({ data: [{ vendor_id: 7, name: 'Acme', name_ar: 'أكمي' }, { vendor_id: 'V-x', name: 'B', name_ar: 'ب' }] }),
      cardListSchema,
    );
    expect(vendors.data).toEqual([
      { vendorId: '7', name: 'Acme', nameAr: 'أكمي' },
      { vendorId: 'V-x', name: 'B', nameAr: 'ب' },
    ]);
    const cards = interpretResponse(
      'getCardDetailsList',
      200,
      '{"status":true,"code":"11111","data":[{"card_id":"101","name_in_english":"A","name_in_arabic":"ا","amount":"10.50","balance":3},' +
        '{"card_id":102,"name_in_english":"B","name_in_arabic":"ب","amount":12.25,"balance":"0"}]}',
      cardDetailsListSchema,
    );
    expect(cards.data).toEqual([
      { cardId: '101', nameEn: 'A', nameAr: 'ا', amount: '10.50', balance: 3 },
      { cardId: '102', nameEn: 'B', nameAr: 'ب', amount: '12.25', balance: 0 },
    ]);
  });

  it.each([
    [{ amount: '1e3' }, 'data[0].amount'],
    [{ amount: '-1' }, 'data[0].amount'],
    [{ balance: -1 }, 'data[0].balance'],
    [{ balance: 1.5 }, 'data[0].balance'],
    [{ card_id: 2 ** 60 }, 'data[0].card_id'],
    [{ name_in_arabic: undefined }, 'data[0].name_in_arabic'],
  ])('refuses a denomination with %j', (patch, path) => {
    const card = { card_id: '1', name_in_english: 'A', name_in_arabic: 'ا', amount: '1.00', balance: 1, ...patch };
    const e = fail(() => interpretResponse('getCardDetailsList', 200, ok({ data: [card] }), cardDetailsListSchema));
    expect(e.kind).toBe('malformed');
    expect(e.message).toContain(path);
  });

  it('initiate: transaction_id at top level, as a safe integer, or nested under data', () => {
    expect(interpretResponse('initiateCardRequest', 200, ok({ transaction_id: 'TX-1' }), initiateSchema)).toEqual({ transactionId: 'TX-1' });
    expect(interpretResponse('initiateCardRequest', 200, ok({ transaction_id: 42 }), initiateSchema)).toEqual({ transactionId: '42' });
    expect(interpretResponse('initiateCardRequest', 200, ok({ data: { transaction_id: 'N' } }), initiateSchema)).toEqual({ transactionId: 'N' });
    expect(interpretResponse('initiateCardRequest', 200, ok({ data: [{ transaction_id: 'A' }] }), initiateSchema)).toEqual({ transactionId: 'A' });
  });

  it.each([{}, { transaction_id: '' }, { transaction_id: 2 ** 60 }, { transaction_id: null }, { data: [] }])(
    'initiate without a usable transaction_id (%j) is malformed with an unknown outcome',
    (extra) => {
      const e = fail(() => interpretResponse('initiateCardRequest', 200, ok(extra), initiateSchema));
      expect(e).toMatchObject({ kind: 'malformed', upstreamCode: 11111, outcomeUnknown: true, retrySafe: false });
    },
  );

  it('confirm: returns cards; a malformed card never puts the code in the error', () => {
    const cards = interpretResponse('confirmOrder', 200, ok({ data: [{ card_code: 'SECRET-1', card_number: 5 }] }), confirmSchema);
    expect(cards.data).toEqual([{ cardCode: 'SECRET-1', cardNumber: '5' }]);
    const e = fail(() =>
      interpretResponse('confirmOrder', 200, ok({ data: [{ card_code: 'SECRET-2', card_number: { x: 'SECRET-3' } }] }), confirmSchema),
    );
    expect(e).toMatchObject({ kind: 'malformed', outcomeUnknown: true });
    expect(e.message).toBe('confirmOrder: malformed [HTTP 200]: data[0].card_number: invalid_union');
    expect(JSON.stringify({ ...e, message: e.message })).not.toContain('SECRET');
  });

  it('balance needs at least one entry', () => {
    expect(fail(() => interpretResponse('getBalance', 200, ok({ data: [] }), balanceSchema)).kind).toBe('malformed');
  });
});
