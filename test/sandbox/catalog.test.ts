import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { call, login, startSandbox } from './helpers.js';

const ARABIC = /[\u0600-\u06FF]/;

describe('sandbox catalog endpoints (4.2-4.4)', () => {
  let sandbox: Sandbox;
  afterEach(async () => sandbox?.close());

  it('lists active vendors with string ids and English and Arabic names', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const res = await call(sandbox.url, 'get-card-list', { token });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe(true);
    expect(res.json.code).toBe('11111');
    const vendors = res.json.data as Array<Record<string, unknown>>;
    expect(vendors.length).toBeGreaterThanOrEqual(5);
    for (const v of vendors) {
      expect(Object.keys(v).sort()).toEqual(['name', 'name_ar', 'vendor_id']);
      expect(typeof v.vendor_id).toBe('string');
      expect(v.name_ar).toMatch(ARABIC);
    }
    const ids = vendors.map((v) => v.vendor_id);
    expect(ids).toContain('V-1');
    expect(ids).toContain('v-1');
    expect(ids).not.toContain('9'); // inactive vendor
  });

  it('lists denominations with decimal-string amounts and integer balances', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const res = await call(sandbox.url, 'get-card-details-list', { token, body: { vendor_id: '1' } });
    expect(res.json).toMatchObject({ status: true, code: '11111' });
    expect(res.json.data).toEqual([
      { card_id: '101', name_in_english: 'iTunes USA $10', name_in_arabic: expect.stringMatching(ARABIC), amount: '9.99', balance: 50 },
      { card_id: '102', name_in_english: 'iTunes USA $15', name_in_arabic: expect.stringMatching(ARABIC), amount: '15', balance: 3 },
      { card_id: '103', name_in_english: 'iTunes USA $100', name_in_arabic: expect.stringMatching(ARABIC), amount: '100.00', balance: 0 },
    ]);
  });

  it('accepts vendor_id as a string or an integer, matching its exact string form', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const asInt = await call(sandbox.url, 'get-card-details-list', { token, body: { vendor_id: 2 } });
    const asString = await call(sandbox.url, 'get-card-details-list', { token, body: { vendor_id: '2' } });
    expect(asInt.json.data).toEqual(asString.json.data);
    expect((asInt.json.data as unknown[]).length).toBe(2);
    for (const odd of [' 2', '2.0', 2.5, '02']) {
      expect((await call(sandbox.url, 'get-card-details-list', { token, body: { vendor_id: odd } })).json, String(odd)).toMatchObject({ code: 10002 });
    }
  });

  it('treats vendor ids that differ only by case as different vendors', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const upper = await call(sandbox.url, 'get-card-details-list', { token, body: { vendor_id: 'V-1' } });
    const lower = await call(sandbox.url, 'get-card-details-list', { token, body: { vendor_id: 'v-1' } });
    expect((upper.json.data as Array<{ card_id: string }>).map((c) => c.card_id)).toEqual(['301', '302']);
    expect((lower.json.data as Array<{ card_id: string }>).map((c) => c.card_id)).toEqual(['401']);
  });

  it('answers 10002 for unknown or inactive vendors and 10005 for a missing vendor_id', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    expect((await call(sandbox.url, 'get-card-details-list', { token, body: { vendor_id: 'V-2' } })).json).toEqual({
      status: false,
      code: 10002,
      error: expect.any(String),
    });
    expect((await call(sandbox.url, 'get-card-details-list', { token, body: { vendor_id: '9' } })).json).toMatchObject({ code: 10002 });
    expect((await call(sandbox.url, 'get-card-details-list', { token, body: {} })).json).toMatchObject({ code: 10005 });
    expect((await call(sandbox.url, 'get-card-details-list', { token, body: { vendorId: '1' } })).json).toMatchObject({ code: 10005 });
  });

  it('hides inactive denominations and answers 10002 for them', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    const details = await call(sandbox.url, 'get-card-details-list', { token, body: { vendor_id: '5' } });
    expect((details.json.data as Array<{ card_id: string }>).map((c) => c.card_id)).toEqual(['501']);
    expect((await call(sandbox.url, 'get-balance-details', { token, body: { card_id: '502' } })).json).toMatchObject({ code: 10002 });
  });

  it('answers the balance with card_id echoed as an integer and an integer balance', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    for (const cardId of [101, '101']) {
      const res = await call(sandbox.url, 'get-balance-details', { token, body: { card_id: cardId } });
      expect(res.json).toEqual({ status: true, code: '11111', data: [{ card_id: 101, balance: 50 }] });
    }
    const zero = await call(sandbox.url, 'get-balance-details', { token, body: { card_id: 103 } });
    expect(zero.json.data).toEqual([{ card_id: 103, balance: 0 }]);
    // A non-numeric id cannot be an integer: it is echoed as given.
    const alpha = await call(sandbox.url, 'get-balance-details', { token, body: { card_id: 'PSN-50' } });
    expect(alpha.json.data).toEqual([{ card_id: 'PSN-50', balance: 10 }]);
  });

  it('answers 10005 without card_id and 10002 for unknown or other-case card ids', async () => {
    sandbox = await startSandbox();
    const token = await login(sandbox);
    expect((await call(sandbox.url, 'get-balance-details', { token, body: {} })).json).toMatchObject({ status: false, code: 10005 });
    expect((await call(sandbox.url, 'get-balance-details', { token, body: { cardId: 101 } })).json).toMatchObject({ code: 10005 });
    expect((await call(sandbox.url, 'get-balance-details', { token, body: { card_id: null } })).json).toMatchObject({ code: 10005 });
    for (const id of [999, 'psn-50', '101 ', true]) {
      expect((await call(sandbox.url, 'get-balance-details', { token, body: { card_id: id } })).json, String(id)).toMatchObject({ code: 10002 });
    }
  });

  it('serves the Production shape under basePath and nothing at the bare paths', async () => {
    sandbox = await startSandbox({ basePath: '/production770' });
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/production770$/);
    const token = await login(sandbox);
    expect((await call(sandbox.url, 'get-card-list', { token })).json.status).toBe(true);
    const bare = await call(sandbox.url.replace('/production770', ''), 'get-card-list', { token });
    expect(bare.status).toBe(404);
    expect(bare.json.status).toBe(false);
  });

  it('serves the Development shape at the root', async () => {
    sandbox = await startSandbox({ basePath: '' });
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const token = await login(sandbox);
    expect((await call(sandbox.url, 'get-card-list', { token })).json.code).toBe('11111');
  });

  it('loads a catalog given as an object and rejects an invalid one', async () => {
    sandbox = await startSandbox({
      catalog: { vendors: [{ vendor_id: 'X', name: 'Only', name_ar: 'فقط', cards: [{ card_id: '7', name_in_english: 'Seven', name_in_arabic: 'سبعة', amount: '7.5', stock: 1 }] }] },
    });
    const token = await login(sandbox);
    expect((await call(sandbox.url, 'get-card-list', { token })).json.data).toEqual([{ vendor_id: 'X', name: 'Only', name_ar: 'فقط' }]);
    const { createSandbox } = await import('../../src/sandbox/index.js');
    await expect(createSandbox({ catalog: { vendors: [{ vendor_id: 'X', name: 'a', name_ar: 'ب', cards: [{ card_id: '1', name_in_english: 'a', name_in_arabic: 'ب', amount: '1.234', stock: 1 }] }] } })).rejects.toThrow(/amount/);
  });
});
