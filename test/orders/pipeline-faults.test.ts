import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCatalogCache } from '../../src/catalog/catalog-cache.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Every provider error on every step, against the sandbox over real HTTP. After each case the
 * sandbox is asked what it holds: nothing reserved for failed orders, exactly one payment at most.
 */
describe('purchase pipeline under provider faults', () => {
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    key = await gw.key();
  });
  afterEach(() => {
    gw.sandbox.sandbox.control.setFaults({ failNext: {}, errorRate: {}, afterCommit: {}, latencyMs: 0, endpointLatencyMs: {} });
    gw.sandbox.sandbox.events.removeAllListeners('call');
  });
  afterAll(() => gw.close());

  const reservationsOf = (transactionNumber: number) => [...gw.sandbox.sandbox.state.reservations.values()].filter((r) => r.transactionNumber === transactionNumber);
  // A replayed answer (reconfirm=same-cards) is not a second payment.
  const paymentsOf = (transactionId: string) => gw.sandbox.sandbox.state.confirmations.filter((c) => c.transactionId === transactionId && !c.replay);
  const place = async (body: Record<string, unknown>) => {
    const res = await gw.order(key, body);
    expect(res.status).toBe(202);
    return gw.settled(key, res.body.id);
  };

  describe('balance check', () => {
    it('fails with out_of_stock and reserves nothing when stock is short', async () => {
      const order = await place({ cardId: '202', quantity: 3 });
      expect(order).toMatchObject({ status: 'failed', failure: { code: 'out_of_stock' }, transactionId: null });
      expect(reservationsOf(order.transactionNumber)).toHaveLength(0);
    });

    it('rides out a 10001 storm shorter than its retry budget', async () => {
      // The client makes 4 attempts per check; 6 failures spill into a second check, which succeeds.
      gw.sandbox.sandbox.control.setFaults({ failNext: { 'get-balance-details': 6 } });
      const order = await place({ cardId: '201', quantity: 1 });
      expect(order.status).toBe('fulfilled');
      const row = await gw.ctx.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
      expect(row.balanceChecks).toBe(2);
    });

    it('fails with provider_unavailable after a longer storm, with nothing reserved', async () => {
      gw.sandbox.sandbox.control.setFaults({ failNext: { 'get-balance-details': 1000 } });
      const order = await place({ cardId: '201', quantity: 1 });
      expect(order).toMatchObject({ status: 'failed', failure: { code: 'provider_unavailable', upstreamCode: 10001 } });
      expect(reservationsOf(order.transactionNumber)).toHaveLength(0);
    });

    it('fails with card_unavailable when the provider answers 10002 (the catalog was stale)', async () => {
      // A denomination our catalog still lists but the provider no longer knows.
      await gw.ctx.prisma.denomination.create({
        data: { id: 'GONE-1', vendorId: '2', nameEn: 'Gone', nameAr: 'منتهي', unitPrice: '5', unitPriceValue: '5', stock: 9, firstSeenAt: new Date(), lastSeenAt: new Date() },
      });
      const order = await placeThroughFreshCatalog('GONE-1');
      expect(order).toMatchObject({ status: 'failed', failure: { code: 'card_unavailable', upstreamCode: 10002 } });
    });
  });

  describe('initiate', () => {
    it('fails with insufficient_balance on 10006 (stock gone between check and reservation)', async () => {
      gw.sandbox.sandbox.events.on('call', (call) => {
        if (call.endpoint === 'get-balance-details') gw.sandbox.sandbox.control.setStock('302', 0);
      });
      const order = await place({ cardId: '302', quantity: 2 });
      gw.sandbox.sandbox.control.setStock('302', 40);
      expect(order).toMatchObject({ status: 'failed', failure: { code: 'insufficient_balance', upstreamCode: 10006 } });
      expect(reservationsOf(order.transactionNumber)).toHaveLength(0);
    });

    it('never initiates twice when the answer is 10001: needs_attention with the transaction number', async () => {
      gw.sandbox.sandbox.control.setFaults({ failNext: { 'initiate-card-request': 1 } });
      const order = await place({ cardId: '201', quantity: 1 });
      expect(order.status).toBe('needs_attention');
      expect(order.statusDetail).toMatch(/^initiate_outcome_unknown/);
      expect(order.transactionId).toBeNull();
      const initiates = (await gw.ctx.prisma.orderEvent.findMany({ where: { orderId: order.id, endpoint: 'initiateCardRequest' } })).length;
      expect(initiates).toBe(1);
    });

    it('keeps a reservation traceable when the connection drops after the provider committed it', async () => {
      gw.sandbox.sandbox.control.setFaults({ afterCommit: { 'initiate-card-request': { action: 'drop', times: 1 } } });
      const order = await place({ cardId: '201', quantity: 1 });
      expect(order.status).toBe('needs_attention');
      expect(order.statusDetail).toMatch(/^initiate_outcome_unknown/);
      // The provider holds one reservation, findable by the transaction number support sees.
      const held = reservationsOf(order.transactionNumber);
      expect(held).toHaveLength(1);
      expect(held[0]!.status).toBe('pending');
    });

    it('logs in again once when the token expired, and carries on', async () => {
      gw.sandbox.sandbox.control.expireTokens();
      const order = await place({ cardId: '201', quantity: 1 });
      expect(order.status).toBe('fulfilled');
      const calls = await gw.ctx.prisma.orderEvent.findMany({ where: { orderId: order.id, kind: 'provider_call' }, orderBy: { id: 'asc' } });
      expect(calls.map((e) => e.upstreamCode)).toContain(10000);
      // The login that call started is on the order's timeline, after the refused attempt.
      const refused = calls.findIndex((e) => e.upstreamCode === 10000);
      expect(calls.slice(refused + 1).some((e) => e.endpoint === 'login' && e.ok === true)).toBe(true);
    });
  });

  describe('confirm', () => {
    it('repeats a confirm refused before any work (10001) with the same transaction_id, and pays once', async () => {
      gw.sandbox.sandbox.control.setFaults({ failNext: { 'confirm-order': 1 } });
      const order = await place({ cardId: '201', quantity: 1 });
      expect(order.status).toBe('fulfilled');
      expect(paymentsOf(order.transactionId)).toHaveLength(1);
      const row = await gw.ctx.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
      expect(row.confirmAttempts).toBe(2);
    });

    it('goes to needs_attention with the transaction_id when a paid confirm answer was lost and the provider refuses a repeat', async () => {
      gw.sandbox.sandbox.control.setFaults({ afterCommit: { 'confirm-order': { action: 'drop', times: 1 } } });
      const order = await place({ cardId: '201', quantity: 1 });
      expect(order.status).toBe('needs_attention');
      expect(order.statusDetail).toMatch(/^confirm_outcome_unknown/);
      expect(order.transactionId).toEqual(expect.any(String));
      // Paid exactly once; support recovers the cards with the transaction_id.
      expect(paymentsOf(order.transactionId)).toHaveLength(1);
      expect(await gw.ctx.prisma.orderCard.count({ where: { orderId: order.id } })).toBe(0);
    });

    it('stores the cards when the provider answers a repeated confirm with the same cards', async () => {
      gw.sandbox.sandbox.control.setBehaviour({ reconfirm: 'same-cards' });
      try {
        gw.sandbox.sandbox.control.setFaults({ afterCommit: { 'confirm-order': { action: 'drop', times: 1 } } });
        const order = await place({ cardId: '201', quantity: 2 });
        expect(order.status).toBe('fulfilled');
        expect(order.cards).toEqual(gw.sandbox.sandbox.control.cardsOf(order.transactionId).map((c) => ({ code: c.cardCode, number: c.cardNumber })));
        expect(paymentsOf(order.transactionId)).toHaveLength(1);
      } finally {
        gw.sandbox.sandbox.control.setBehaviour({ reconfirm: 'fail' });
      }
    });

    it('gives up after its confirm budget in a 10001 storm: needs_attention, nothing paid', async () => {
      gw.sandbox.sandbox.control.setFaults({ failNext: { 'confirm-order': 1000 } });
      const order = await place({ cardId: '201', quantity: 1 });
      expect(order.status).toBe('needs_attention');
      expect(order.statusDetail).toMatch(/^confirm_outcome_unknown/);
      expect(paymentsOf(order.transactionId)).toHaveLength(0);
      const row = await gw.ctx.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
      expect(row.confirmAttempts).toBe(3);
    });
  });

  describe('busy mode', () => {
    it('holds initiations while busy, keeps accepting orders, and releases them when busy mode ends', async () => {
      await gw.busy.set(true, { reason: 'maintenance' });
      try {
        const res = await gw.order(key, { cardId: '201', quantity: 1 });
        expect(res.status).toBe(202);
        await expect
          .poll(async () => (await gw.app.inject({ method: 'GET', url: `/v1/orders/${res.body.id}`, headers: { authorization: `Bearer ${key}` } })).json(), { timeout: 5_000 })
          .toMatchObject({ status: 'queued', statusDetail: 'provider_busy' });
        expect(reservationsOf(res.body.transactionNumber)).toHaveLength(0);
        await gw.busy.set(false);
        const order = await gw.settled(key, res.body.id);
        expect(order.status).toBe('fulfilled');
      } finally {
        await gw.busy.set(false);
      }
    });
  });

  /** The app serves the catalog from memory: a second app, loaded after the insert, sees the row. */
  async function placeThroughFreshCatalog(cardId: string) {
    const catalog = createCatalogCache({ prisma: gw.ctx.prisma, log: gw.ctx.log, staleAfterMs: 3_600_000 });
    await catalog.reload();
    const app = await gw.ctx.app({ catalog });
    const res = await app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${key}`, 'idempotency-key': `gone-${Date.now()}` }, payload: { cardId, quantity: 1 } });
    expect(res.statusCode).toBe(202);
    return gw.settled(key, res.json().id);
  }
});
