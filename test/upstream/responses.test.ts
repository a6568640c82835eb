import { describe, expect, it } from 'vitest';
import { salvageOf, UpstreamError } from '../../src/upstream/errors.js';
import { interpretResponse } from '../../src/upstream/responses.js';
import { classifyFailure } from '../../src/upstream/retry-policy.js';
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

  it('the code decides: a success code with status false is accepted, with a warning', () => {
    const warnings: string[] = [];
    const body = JSON.stringify({ status: false, code: '11111', token: 't' });
    expect(interpretResponse('login', 200, body, loginSchema, (w) => warnings.push(w))).toEqual({ token: 't' });
    expect(warnings).toEqual(['success code with status false']);
    const noWarning: string[] = [];
    interpretResponse('login', 200, ok({ token: 't' }), loginSchema, (w) => noWarning.push(w));
    expect(noWarning).toEqual([]);
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

  it('initiate: a transaction_id integer beyond 2^53 keeps every digit of the literal', () => {
    const body = '{"status":true,"code":"11111","transaction_id":123456789012345678901}';
    expect(interpretResponse('initiateCardRequest', 200, body, initiateSchema)).toEqual({ transactionId: '123456789012345678901' });
  });

  it.each([{}, { transaction_id: '' }, { transaction_id: '  ' }, { transaction_id: 1.5 }, { transaction_id: null }, { data: [] }])(
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

describe('interpretResponse: lenient envelope', () => {
  const initiate = (body: string) => interpretResponse('initiateCardRequest', 200, body, initiateSchema);

  it.each([
    '{"code":"11111","error":null,"transaction_id":"T1"}',
    '{"code":"11111","transaction_id":"T1"}',
    '{"status":"true","code":"11111","transaction_id":"T1"}',
    '{"status":" TRUE ","code":" 11111 ","transaction_id":"T1"}',
    '{"status":null,"code":11111,"transaction_id":"T1"}',
    '{"status":1,"code":"11111","error":"","transaction_id":"T1"}',
    '{"status":false,"code":"11111","transaction_id":"T1"}',
    '{"status":"false","code":"11111","transaction_id":"T1"}',
  ])('initiate success %s', (body) => {
    expect(initiate(body)).toEqual({ transactionId: 'T1' });
  });

  it.each(['"1 1111"', '"11111x"', '""', 'null', '11111.5', 'true'])('an unreadable code %s is malformed', (code) => {
    const e = fail(() => interpretResponse('getCardList', 200, `{"status":true,"code":${code},"data":[]}`, cardListSchema));
    expect(e.kind).toBe('malformed');
    expect(e.message).toContain('envelope code');
  });

  it.each([
    ['error null', '{"status":false,"code":10001,"error":null}'],
    ['error absent', '{"status":false,"code":"10001"}'],
    ['error not a string', '{"status":"false","code":"10001","error":{"x":1}}'],
    ['code padded', '{"status":false,"code":" 10001\\n","error":"busy"}'],
  ])('reads: a 10001 with %s is a retry-safe provider error, not malformed', (_label, body) => {
    const e = fail(() => interpretResponse('getCardList', 200, body, cardListSchema));
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10001, retrySafe: true, outcomeUnknown: false });
    expect(e.salvage).toBeUndefined();
  });

  it('the provider text is trimmed, and an empty one is no text', () => {
    expect(fail(() => interpretResponse('getBalance', 200, '{"code":10005,"error":"  Card ID Missing \\n"}', balanceSchema)).providerMessage).toBe(
      'Card ID Missing',
    );
    expect(fail(() => interpretResponse('getBalance', 200, '{"code":10005,"error":"   "}', balanceSchema)).providerMessage).toBeUndefined();
  });
});

describe('interpretResponse: salvage on refused write answers', () => {
  const initiate = (body: string) => fail(() => interpretResponse('initiateCardRequest', 200, body, initiateSchema));
  const confirm = (body: string) => fail(() => interpretResponse('confirmOrder', 200, body, confirmSchema));

  it.each([
    ['10001 with a top-level id', '{"status":false,"code":10001,"error":"x","transaction_id":"T9"}', 'provider'],
    ['10006 with an id under data', '{"status":false,"code":10006,"data":{"transaction_id":"T9"}}', 'provider'],
    ['an undocumented code with an id in a data array', '{"status":false,"code":"12345","data":[{"transaction_id":"T9"}]}', 'provider'],
    ['no code at all', '{"status":true,"transaction_id":"T9"}', 'malformed'],
    ['a non-numeric code', '{"status":true,"code":"OK","transaction_id":"T9"}', 'malformed'],
  ])('initiate, %s: the id travels on the error and the outcome is unknown', (_label, body, kind) => {
    const e = initiate(body);
    expect(e).toMatchObject({ kind, retrySafe: false, outcomeUnknown: true });
    expect(e.salvage).toEqual({ transactionId: 'T9' });
    expect(salvageOf(e)).toEqual({ transactionId: 'T9' });
  });

  it('initiate, 10000 carrying an id: not a re-login-and-repeat case (a second reservation could follow)', () => {
    const e = initiate('{"status":false,"code":10000,"transaction_id":"T9"}');
    expect(classifyFailure(e)).toEqual({ retryInClient: false, reauthenticate: false, retrySafe: false, outcomeUnknown: true });
  });

  it('initiate, a numeric id beyond 2^53 in an error answer is salvaged digit-exact', () => {
    expect(initiate('{"code":10001,"transaction_id":98765432109876543210}').salvage).toEqual({ transactionId: '98765432109876543210' });
  });

  it('initiate, broken JSON that names one transaction_id: the id is salvaged from the text', () => {
    const e = initiate('{"status":true,"code":"11111","transaction_id":"T\\u00e9-7",');
    expect(e).toMatchObject({ kind: 'malformed', outcomeUnknown: true });
    expect(e.message).toBe('initiateCardRequest: malformed [HTTP 200]: body is not JSON');
    expect(e.salvage).toEqual({ transactionId: 'Té-7' });
  });

  it('initiate, broken JSON naming two different ids, or none: nothing is guessed', () => {
    expect(initiate('{"transaction_id":"A","data":{"transaction_id":"B"').salvage).toBeUndefined();
    expect(initiate('<html>502</html>').salvage).toBeUndefined();
  });

  it('confirm: numeric card_code and card_number are coerced to strings, exactly', () => {
    const body = '{"status":true,"code":"11111","data":[{"card_code":5,"card_number":7},{"card_code":12345678901234567890123,"card_number":"N2"}]}';
    expect(interpretResponse('confirmOrder', 200, body, confirmSchema).data).toEqual([
      { cardCode: '5', cardNumber: '7' },
      { cardCode: '12345678901234567890123', cardNumber: 'N2' },
    ]);
  });

  it('confirm: card_number null or missing → malformed, and the codes travel on the error with an empty number', () => {
    const e = confirm(ok({ data: [{ card_code: 'SECRET-A', card_number: null }, { card_code: 'SECRET-B' }] }));
    expect(e).toMatchObject({ kind: 'malformed', upstreamCode: 11111, outcomeUnknown: true, retrySafe: false });
    expect(e.salvage).toEqual({
      cards: [
        { cardCode: 'SECRET-A', cardNumber: '' },
        { cardCode: 'SECRET-B', cardNumber: '' },
      ],
    });
    expect(`${e.message} ${JSON.stringify(e)} ${Object.keys(e).join()}`).not.toMatch(/SECRET|salvage/);
  });

  it('confirm: some unusable entries → the whole answer is malformed, and every usable card is salvaged', () => {
    const data = [
      { card_code: 'SECRET-1', card_number: 'N1' },
      { card_code: '', card_number: 'N2' },
      { card_code: null, card_number: 'N3' },
      'junk',
      { card_code: 'SECRET-5', card_number: { nested: true } },
      { card_code: 77, card_number: 8 },
    ];
    const e = confirm(ok({ data }));
    expect(e.kind).toBe('malformed');
    expect(e.message).toContain('data[1].card_code');
    expect(e.salvage?.cards).toEqual([
      { cardCode: 'SECRET-1', cardNumber: 'N1' },
      { cardCode: 'SECRET-5', cardNumber: '' },
      { cardCode: '77', cardNumber: '8' },
    ]);
  });

  it('confirm: an error envelope that nevertheless carries cards salvages them', () => {
    const e = confirm('{"status":false,"code":10001,"error":"Error while Processing","data":[{"card_code":"SECRET-Z","card_number":"N"}]}');
    expect(e).toMatchObject({ kind: 'provider', upstreamCode: 10001, outcomeUnknown: true });
    expect(e.salvage).toEqual({ cards: [{ cardCode: 'SECRET-Z', cardNumber: 'N' }] });
  });

  it('confirm: data as a single object instead of an array is salvaged as one card', () => {
    const e = confirm(ok({ data: { card_code: 'SECRET-S', card_number: 'N' }, transaction_id: 'T3' }));
    expect(e.salvage).toEqual({ transactionId: 'T3', cards: [{ cardCode: 'SECRET-S', cardNumber: 'N' }] });
  });

  it('confirm: an empty card list is a success; the count is the pipeline’s to check', () => {
    expect(interpretResponse('confirmOrder', 200, ok({ data: [] }), confirmSchema).data).toEqual([]);
  });

  it('a refused answer with nothing to salvage keeps its previous classification', () => {
    const e = initiate('{"status":false,"code":10006,"error":"Insufficient Balance"}');
    expect(e).toMatchObject({ outcomeUnknown: false, retrySafe: false });
    expect(e.salvage).toBeUndefined();
  });

  it('reads never carry salvage, even when the answer names a transaction_id', () => {
    const e = fail(() => interpretResponse('getCardList', 200, '{"code":10001,"transaction_id":"T1","data":[{"card_code":"C"}]}', cardListSchema));
    expect(e.salvage).toBeUndefined();
    expect(e).toMatchObject({ retrySafe: true, outcomeUnknown: false });
  });
});
