import { describe, expect, it } from 'vitest';
import { hasSalvage, quoteIdentifierLiterals, salvageFromJson, salvageFromText, usableIdentifier } from '../../src/upstream/salvage.js';

describe('quoteIdentifierLiterals', () => {
  it.each([
    ['{"transaction_id":123456789012345678901}', '{"transaction_id":"123456789012345678901"}'],
    ['{"data":[{"card_code": 98765432109876543210 ,"card_number":0}]}', '{"data":[{"card_code": "98765432109876543210" ,"card_number":"0"}]}'],
    ['{"card_number":5}', '{"card_number":"5"}'],
  ])('quotes integer literals of identifier keys: %s', (input, output) => {
    expect(quoteIdentifierLiterals(input)).toBe(output);
    expect(() => JSON.parse(quoteIdentifierLiterals(input)) as unknown).not.toThrow();
  });

  it.each([
    '{"card_id":123456789012345678901}', // other keys keep their numbers
    '{"x_card_code":5}',
    '{"card_code":1.5}', // not an integer literal: left to the schema, which refuses it
    '{"card_code":-5}',
    '{"card_code":1e21}',
    '{"card_code":007}', // invalid JSON stays invalid
    '{"note":"\\"card_code\\":5"}', // inside a string value
    '{"a":"card_code","b":5}',
  ])('leaves everything else alone: %s', (input) => {
    expect(quoteIdentifierLiterals(input)).toBe(input);
  });
});

describe('usableIdentifier', () => {
  it.each([
    ['T-1', 'T-1'],
    [' T-1 ', ' T-1 '], // kept exact: identifiers may be format-sensitive
    [0, '0'],
    [42, '42'],
  ])('%j → %j', (value, expected) => expect(usableIdentifier(value)).toBe(expected));

  it.each(['', '  ', null, undefined, -1, 1.5, 2 ** 60, true, {}, []])('%j is not usable', (value) => {
    expect(usableIdentifier(value)).toBeUndefined();
  });
});

describe('salvageFromJson', () => {
  it('finds the transaction_id at the top level first, then under data', () => {
    expect(salvageFromJson({ transaction_id: 'A', data: { transaction_id: 'B' } })).toEqual({ transactionId: 'A' });
    expect(salvageFromJson({ transaction_id: '', data: { transaction_id: 'B' } })).toEqual({ transactionId: 'B' });
    expect(salvageFromJson({ data: [{}, { transaction_id: 7 }] })).toEqual({ transactionId: '7' });
  });

  it('keeps every entry with a usable code, with an empty number when it has none', () => {
    expect(
      salvageFromJson({
        data: [{ card_code: 'C1', card_number: 'N1' }, { card_code: 'C2', card_number: null }, { card_code: 3 }, { card_code: ' ' }, { card_number: 'N5' }, 5, null],
      }),
    ).toEqual({
      cards: [
        { cardCode: 'C1', cardNumber: 'N1' },
        { cardCode: 'C2', cardNumber: '' },
        { cardCode: '3', cardNumber: '' },
      ],
    });
  });

  it.each([null, 'x', [], [{ card_code: 'C' }], {}, { data: 'x' }, { data: [{ card_code: '' }] }, { transaction_id: null }])(
    'nothing to keep in %j',
    (json) => {
      expect(salvageFromJson(json)).toBeUndefined();
    },
  );
});

describe('salvageFromText', () => {
  it('takes the one transaction_id a broken answer names', () => {
    expect(salvageFromText('{"status":true,"transaction_id" : "T-1","da')).toEqual({ transactionId: 'T-1' });
    expect(salvageFromText('{"transaction_id":123456789012345678901,"x":')).toEqual({ transactionId: '123456789012345678901' });
    expect(salvageFromText('{"transaction_id":"T-1","data":{"transaction_id":"T-1"')).toEqual({ transactionId: 'T-1' });
  });

  it('guesses nothing when ids disagree, are cut off or absent, and never returns codes', () => {
    expect(salvageFromText('{"transaction_id":"A","data":{"transaction_id":"B"}')).toBeUndefined();
    expect(salvageFromText('{"transaction_id":"T-1')).toBeUndefined();
    expect(salvageFromText('{"transaction_id":12')).toBeUndefined();
    expect(salvageFromText('{"data":[{"card_code":"C1","card_number":"N1"},')).toBeUndefined();
    expect(salvageFromText('<html>502</html>')).toBeUndefined();
  });
});

describe('hasSalvage', () => {
  it('is true only when something is there', () => {
    expect(hasSalvage(undefined)).toBe(false);
    expect(hasSalvage({})).toBe(false);
    expect(hasSalvage({ cards: [] })).toBe(false);
    expect(hasSalvage({ transactionId: 'T' })).toBe(true);
    expect(hasSalvage({ cards: [{ cardCode: 'C', cardNumber: '' }] })).toBe(true);
  });
});
