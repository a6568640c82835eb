import { describe, expect, it } from 'vitest';
import { catalogId, decimalAmount, encodeJsonBody, integerField, InvalidInputError, JsonNumber } from '../../src/upstream/json-body.js';

const text = (v: unknown) => (v instanceof JsonNumber ? v.text : v);

describe('decimalAmount', () => {
  it.each([
    ['0.3', '0.3'],
    ['0.30', '0.3'],
    ['15', '15'],
    ['15.00', '15'],
    ['007.50', '7.5'],
    ['0', '0'],
    ['0.00', '0'],
    ['1000', '1000'],
    ['123456789012.345', '123456789012.345'],
    ['0.000001', '0.000001'],
  ])('%s is written as the number text %s', (input, expected) => {
    expect(text(decimalAmount(input, 'totalAmount'))).toBe(expected);
  });

  it.each(['-1', '-0.5'])('rejects negative %s', (input) => {
    expect(() => decimalAmount(input, 'totalAmount')).toThrow(/must not be negative/);
  });

  it.each(['', ' 1', '1 ', '1e3', '0x10', 'Infinity', 'NaN', '.5', '5.', '+5', '1,5', '1.2.3'])('rejects %j', (input) => {
    expect(() => decimalAmount(input, 'totalAmount')).toThrow(InvalidInputError);
  });

  it('rejects non-strings that slipped past the types', () => {
    expect(() => decimalAmount(0.3 as unknown as string, 'totalAmount')).toThrow(InvalidInputError);
  });

  it('rejects more significant digits than a double carries, counting neither leading nor trailing zeros', () => {
    expect(() => decimalAmount('1234567890.1234567', 'totalAmount')).toThrow(/significant digits/);
    expect(text(decimalAmount('123456789012345.000', 'totalAmount'))).toBe('123456789012345');
    expect(text(decimalAmount('0.00000012345678901234500', 'totalAmount'))).toBe('0.000000123456789012345');
  });
});

describe('catalogId', () => {
  it.each([
    ['101', 101],
    ['0', 0],
    ['9007199254740991', 9007199254740991],
  ])('canonical integer %s is sent as a JSON number', (id, n) => {
    const body = encodeJsonBody({ card_id: catalogId(id, 'cardId') });
    expect(body).toBe(`{"card_id":${id}}`);
    expect(JSON.parse(body)).toEqual({ card_id: n });
  });

  it.each(['007', 'V-1', 'abc', '9007199254740993', '1.0', ' 12'])('%j is sent as the exact string', (id) => {
    expect(encodeJsonBody({ vendor_id: catalogId(id, 'vendorId') })).toBe(`{"vendor_id":${JSON.stringify(id)}}`);
  });

  it('rejects an empty id', () => {
    expect(() => catalogId('', 'cardId')).toThrow(InvalidInputError);
  });
});

describe('integerField', () => {
  it('accepts safe integers and canonical integer strings', () => {
    expect(text(integerField(3, 'quantity', 1))).toBe('3');
    expect(text(integerField('42', 'transactionNumber', 0))).toBe('42');
    expect(text(integerField(0, 'transactionNumber', 0))).toBe('0');
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '01', '1e2', ''])('rejects %j as a quantity', (v) => {
    expect(() => integerField(v as number, 'quantity', 1)).toThrow(InvalidInputError);
  });
});

describe('encodeJsonBody', () => {
  it('writes number text verbatim and escapes strings', () => {
    const body = encodeJsonBody({
      transaction_id: 'tx "1"',
      total_amount: decimalAmount('0.10', 'totalAmount'),
      payment_id: 'p\u2028',
    });
    expect(body).toBe('{"transaction_id":"tx \\"1\\"","total_amount":0.1,"payment_id":"p\u2028"}');
    expect(JSON.parse(body)).toEqual({ transaction_id: 'tx "1"', total_amount: 0.1, payment_id: 'p\u2028' });
  });
});
