import { describe, expect, it } from 'vitest';
import { isIpAllowed, normaliseIp, readAuthorization } from '../../src/sandbox/access.js';
import { codeFromPattern, serialNumber } from '../../src/sandbox/card-codes.js';
import { completeFaults, decidePreWorkFailure, latencyFor, takeAfterCommit } from '../../src/sandbox/faults.js';
import { amountMatches, expectedTotal, isJsonNumberLiteral } from '../../src/sandbox/money.js';
import { errorEnvelope, MAPPED_HTTP_STATUS, PROVIDER_ERROR_CODES, PROVIDER_ERRORS } from '../../src/sandbox/provider-codes.js';
import { rawMember, redactRawMembers, scanTopLevelMembers } from '../../src/sandbox/raw-json.js';
import { echoCardId, readId, readPositiveInteger } from '../../src/sandbox/request-fields.js';
import { normaliseBasePath } from '../../src/sandbox/index.js';

describe('raw-json', () => {
  it('finds top-level literals exactly as written', () => {
    const text = '{ "a" : {"total_amount": 1}, "total_amount" : 0.30000000000000004 , "s":"x\\"}y", "arr":[1,{"b":2}] }';
    const members = scanTopLevelMembers(text);
    expect(members.get('total_amount')!.raw).toBe('0.30000000000000004');
    expect(members.get('s')!.raw).toBe('"x\\"}y"');
    expect(members.get('arr')!.raw).toBe('[1,{"b":2}]');
    expect(rawMember('[1,2]', 'a')).toBeUndefined();
    expect(rawMember('{"a":', 'a')).toBeUndefined();
  });

  it('redacts every occurrence of a key and leaves other bytes untouched', () => {
    expect(redactRawMembers('{"password":"p1","x":1.10,"password":"p2"}', ['password'])).toBe('{"password":"[redacted]","x":1.10,"password":"[redacted]"}');
    expect(redactRawMembers('{"password":"oops', ['password'])).toBe('[unparseable body redacted]');
    expect(redactRawMembers('not json', ['password'])).toBe('not json');
  });
});

describe('money', () => {
  it('computes totals in decimal and compares raw literals exactly', () => {
    expect(expectedTotal('0.10', 3)).toBe('0.3');
    expect(expectedTotal('9.99', 3)).toBe('29.97');
    expect(expectedTotal('100.00', 2)).toBe('200');
    expect(amountMatches('0.3', '0.3')).toBe(true);
    expect(amountMatches('0.30', '0.3')).toBe(true);
    expect(amountMatches('0.30000000000000004', '0.3')).toBe(false);
    expect(amountMatches('29.970000000000002', '29.97')).toBe(false);
    expect(amountMatches('"0.3"', '0.3')).toBe(false);
    expect(isJsonNumberLiteral('01')).toBe(false);
    expect(isJsonNumberLiteral('-1.5e3')).toBe(true);
  });
});

describe('request fields and access', () => {
  it('reads ids by their exact string form', () => {
    expect(readId({ card_id: 101 }, 'card_id')).toEqual({ kind: 'value', id: '101' });
    expect(readId({ card_id: 'V-1' }, 'card_id')).toEqual({ kind: 'value', id: 'V-1' });
    expect(readId({ card_id: null }, 'card_id')).toEqual({ kind: 'missing' });
    expect(readId({ card_id: 1.5 }, 'card_id')).toEqual({ kind: 'invalid' });
    expect(readPositiveInteger('3')).toBe(3);
    expect(readPositiveInteger('03')).toBeUndefined();
    expect(echoCardId('101')).toBe(101);
    expect(echoCardId('PSN-50')).toBe('PSN-50');
  });

  it('matches IPs across IPv4-mapped IPv6 and reads the Authorization header', () => {
    expect(normaliseIp('::FFFF:127.0.0.1')).toBe('127.0.0.1');
    expect(isIpAllowed('::ffff:10.0.0.1', ['10.0.0.1'])).toBe(true);
    expect(isIpAllowed('10.0.0.2', ['10.0.0.1'])).toBe(false);
    expect(readAuthorization('Bearer abc')).toEqual({ kind: 'bearer', token: 'abc' });
    expect(readAuthorization('bearer  abc ')).toEqual({ kind: 'bearer', token: 'abc' });
    expect(readAuthorization('abc')).toEqual({ kind: 'bare', token: 'abc' });
    expect(readAuthorization('  ')).toEqual({ kind: 'missing' });
  });

  it('normalises base paths', () => {
    expect(normaliseBasePath('/production770/')).toBe('/production770');
    expect(normaliseBasePath('')).toBe('');
    expect(() => normaliseBasePath('production770')).toThrow();
  });
});

describe('faults', () => {
  it('consumes fail-next counters and after-commit budgets', () => {
    let faults = completeFaults({ failNext: { login: 2 }, afterCommit: { 'confirm-order': { action: 'drop', times: 1 } } });
    const a = decidePreWorkFailure(faults, 'login', () => 1);
    expect(a.fail).toBe(true);
    faults = decidePreWorkFailure(a.next, 'login', () => 1).next;
    expect(decidePreWorkFailure(faults, 'login', () => 0).fail).toBe(false);
    const c = takeAfterCommit(faults, 'confirm-order');
    expect(c.fault?.action).toBe('drop');
    expect(takeAfterCommit(c.next, 'confirm-order').fault).toBeUndefined();
    const always = completeFaults({ afterCommit: { 'confirm-order': { action: 'hang' } } });
    expect(takeAfterCommit(always, 'confirm-order').next).toBe(always);
  });

  it('uses the endpoint latency instead of the global one', () => {
    const faults = completeFaults({ latencyMs: 100, endpointLatencyMs: { login: 5 } });
    expect(latencyFor(faults, 'login')).toBe(5);
    expect(latencyFor(faults, 'confirm-order')).toBe(100);
  });
});

describe('codes and cards', () => {
  it('maps every provider error code to an HTTP status and a message; there is no 10004', () => {
    expect(PROVIDER_ERROR_CODES).toEqual([10000, 10001, 10002, 10003, 10005, 10006, 10007, 10008]);
    for (const code of PROVIDER_ERROR_CODES) {
      expect(MAPPED_HTTP_STATUS[code]).toBeGreaterThanOrEqual(400);
      expect(errorEnvelope(code)).toEqual({ status: false, code, error: PROVIDER_ERRORS[code] });
    }
  });

  it('generates codes from patterns and serials from card ids', () => {
    expect(codeFromPattern('XXXX-9999', () => 0)).toBe('AAAA-0000');
    expect(codeFromPattern('XXXX-XXXX')).toMatch(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);
    expect(serialNumber('101', 7)).toBe('SN01010000000007');
    expect(serialNumber('PSN-50', 1)).toBe('SN00500000000001');
  });
});
