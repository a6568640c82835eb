import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../src/support/audit-log.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('support API', () => {
  let gw: TestGateway;
  let storefront: string;
  let reader: string;
  let revealer: string;
  let writer: string;
  const fulfilled: any[] = [];
  let attention: any;

  beforeAll(async () => {
    gw = await startTestGateway();
    storefront = await gw.key();
    reader = await gw.ctx.key(['support:read'], 'agent-reader');
    revealer = await gw.ctx.key(['support:read', 'support:reveal'], 'agent-revealer');
    writer = await gw.ctx.key(['support:read', 'support:write'], 'agent-writer');
    for (const [cardId, quantity, reference] of [['301', 3, 'shop-1'], ['302', 1, 'shop-2'], ['201', 2, 'shop-3']] as const) {
      const res = await gw.order(storefront, { cardId, quantity, reference });
      fulfilled.push(await gw.settled(storefront, res.body.id));
    }
    gw.sandbox.sandbox.control.setFaults({ failNext: { 'confirm-order': 1000 } });
    const res = await gw.order(storefront, { cardId: '201', quantity: 1, reference: 'shop-4' });
    attention = await gw.settled(storefront, res.body.id);
    gw.sandbox.sandbox.control.setFaults({ failNext: {} });
  });
  afterAll(() => gw.close());

  const get = (key: string, url: string, headers: Record<string, string> = {}) => gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, ...headers } });
  const post = (key: string, url: string, payload?: unknown) => gw.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

  it('reports queue health per queue', async () => {
    const res = await get(reader, '/v1/support/queues');
    expect(res.statusCode).toBe(200);
    const names = res.json().data.map((q: { name: string }) => q.name);
    expect(names).toEqual(expect.arrayContaining(['order-pipeline', 'catalog-sync', 'webhook-inbox', 'order-callback']));
    expect(res.json().data.find((q: { name: string }) => q.name === 'order-pipeline')).toMatchObject({ waiting: expect.any(Number), failed: expect.any(Number) });
    expect((await get(storefront, '/v1/support/queues')).statusCode).toBe(403);
  });

  it('refuses storefront keys on support routes', async () => {
    for (const url of ['/v1/support/orders', `/v1/support/orders/${fulfilled[0].id}`, '/v1/support/audit']) {
      expect((await get(storefront, url)).statusCode).toBe(403);
    }
  });

  it('finds an order by transaction number, transaction id, reference or id, exactly', async () => {
    const o = fulfilled[0];
    for (const q of [String(o.transactionNumber), o.transactionId, 'shop-1', o.id]) {
      const res = await get(reader, `/v1/support/orders?q=${encodeURIComponent(q)}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.map((x: { id: string }) => x.id)).toEqual([o.id]);
      expect(res.json().data[0].storefront).toEqual(expect.any(String));
    }
    expect((await get(reader, '/v1/support/orders?q=shop')).json().data).toEqual([]);
    const attentionOnly = (await get(reader, '/v1/support/orders?status=needs_attention')).json().data;
    expect(attentionOnly.map((x: { id: string }) => x.id)).toEqual([attention.id]);
  });

  it('pages through results newest first', async () => {
    const first = (await get(reader, '/v1/support/orders?limit=2')).json();
    expect(first.data).toHaveLength(2);
    const second = (await get(reader, `/v1/support/orders?limit=2&cursor=${first.nextCursor}`)).json();
    expect(second.data).toHaveLength(2);
    expect(second.nextCursor).toBeNull();
    const ids = [...first.data, ...second.data].map((x: { id: string }) => x.id);
    expect(new Set(ids).size).toBe(4);
    const created = [...first.data, ...second.data].map((x: { createdAt: string }) => x.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('shows an order with its timeline and references, never its codes', async () => {
    const o = fulfilled[0];
    const res = await get(reader, `/v1/support/orders/${o.id}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.order).toMatchObject({ id: o.id, transactionNumber: o.transactionNumber, transactionId: o.transactionId, status: 'fulfilled', cards: null });
    expect(body.cardsStored).toBe(3);
    expect(body.vendor).toEqual({ vendorId: 'V-1', name: { en: 'Google Play', ar: 'جوجل بلاي' } });
    const calls = body.timeline.filter((e: { kind: string }) => e.kind === 'provider_call');
    expect(calls.map((c: { endpoint: string }) => c.endpoint)).toEqual(expect.arrayContaining(['getBalance', 'initiateCardRequest', 'confirmOrder']));
    for (const c of calls) expect(c.durationMs).toEqual(expect.any(Number));
    for (const card of o.cards) expect(res.body).not.toContain(card.code);
  });

  it('reveals codes only with support:reveal, and audits every attempt', async () => {
    const o = fulfilled[1];
    const denied = await post(reader, `/v1/support/orders/${o.id}/reveal`, { reason: 'customer call' });
    expect(denied.statusCode).toBe(403);
    expect(denied.body).not.toContain(o.cards[0].code);

    const shown = await post(revealer, `/v1/support/orders/${o.id}/reveal`, { reason: 'customer lost the email' });
    expect(shown.statusCode).toBe(200);
    expect(shown.json().cards).toEqual(o.cards);

    const audit = (await get(revealer, `/v1/support/audit?orderId=${o.id}`)).json().data;
    expect(audit.map((e: { action: string; actor: string }) => [e.action, e.actor])).toEqual([
      ['reveal', 'agent-revealer'],
      ['reveal_denied', 'agent-reader'],
    ]);
    expect(audit[0].detail).toMatchObject({ reason: 'customer lost the email', cards: 1 });
    expect(audit[0].sourceIp).toEqual(expect.any(String));
    expect(JSON.stringify(audit)).not.toContain(o.cards[0].code);
    expect(await verifyAuditChain(gw.ctx.prisma)).toMatchObject({ ok: true });
  });

  it('keeps the audit log append-only and tamper-evident', async () => {
    await expect(gw.ctx.prisma.auditEntry.deleteMany({})).rejects.toThrow(/append-only/);
    await expect(gw.ctx.prisma.$executeRawUnsafe(`UPDATE audit_entries SET actor_name = 'someone else'`)).rejects.toThrow(/append-only/);
    // Someone with the database owner's rights switches the trigger off and edits history:
    await gw.ctx.prisma.$executeRawUnsafe('ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_no_update_or_delete');
    await gw.ctx.prisma.$executeRawUnsafe(`UPDATE audit_entries SET actor_name = 'nobody' WHERE action = 'reveal'`);
    await gw.ctx.prisma.$executeRawUnsafe('ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_no_update_or_delete');
    const report = await verifyAuditChain(gw.ctx.prisma);
    expect(report.ok).toBe(false);
    expect(report.brokenAt).toBeDefined();
  });

  it('retries a needs_attention order through the API, audited, and it settles', async () => {
    expect((await post(reader, `/v1/support/orders/${attention.id}/retry`, { note: 'x' })).statusCode).toBe(403);
    const res = await post(writer, `/v1/support/orders/${attention.id}/retry`, { note: 'provider reports the reservation pending' });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('reserved');
    expect((await gw.settled(storefront, attention.id)).status).toBe('fulfilled');
    const again = await post(writer, `/v1/support/orders/${attention.id}/retry`, { note: 'again' });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('order_not_actionable');
    const audit = await gw.ctx.prisma.auditEntry.findMany({ where: { orderId: attention.id } });
    expect(audit.map((a) => a.action)).toEqual(['retry']);
  });

  it('reports sales by day, vendor and denomination with exact totals, as JSON or CSV', async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const byVendor = (await get(reader, `/v1/support/reports/sales?from=${from}&to=${to}&groupBy=vendor`)).json();
    const v1 = byVendor.rows.find((r: { key: string }) => r.key === 'V-1');
    // 3 × 0.10 + 1 × 24.75 = 25.05, exactly.
    expect(v1).toEqual({ key: 'V-1', nameEn: 'Google Play', nameAr: 'جوجل بلاي', orders: 2, quantity: 4, amount: '25.05' });
    const byCard = (await get(reader, `/v1/support/reports/sales?from=${from}&to=${to}&groupBy=denomination`)).json();
    expect(byCard.rows.find((r: { key: string }) => r.key === '301')).toMatchObject({ orders: 1, quantity: 3, amount: '0.30' });
    const byDay = (await get(reader, `/v1/support/reports/sales?from=${from}&to=${to}`)).json();
    expect(byDay.total.orders).toBe(byVendor.total.orders);
    expect(byDay.total.amount).toBe(byVendor.total.amount);

    const csv = await get(reader, `/v1/support/reports/sales?from=${from}&to=${to}&groupBy=vendor`, { accept: 'text/csv' });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toMatch(/attachment; filename="sales-vendor-/);
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('vendor,name_en,name_ar,orders,quantity,amount');
    expect(lines).toContain('V-1,Google Play,جوجل بلاي,2,4,25.05');
    expect(lines.at(-1)).toMatch(/^total,,,\d+,\d+,\d+\.\d{2}$/);

    const backwards = await get(reader, `/v1/support/reports/sales?from=${to}&to=${from}`);
    expect(backwards.statusCode).toBe(400);
  });
});
