import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

describe('GET /metrics', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close());

  it('reports provider calls, orders by status, queues, catalog age, busy mode and webhook answers', async () => {
    const key = await gw.key();
    const placed = await gw.order(key, { cardId: '201', quantity: 1 });
    await gw.settled(key, placed.body.id);
    await gw.app.inject({ method: 'POST', url: '/webhooks/upstream', headers: { 'content-type': 'application/json' }, payload: '{}' });

    const res = await gw.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text).toMatch(/gateway_provider_calls_total\{endpoint="confirmOrder",code="11111",service="gateway"\} 1/);
    expect(text).toMatch(/gateway_provider_call_seconds_bucket\{le="[\d.]+",service="gateway",endpoint="getBalance"\} 1/);
    expect(text).toMatch(/gateway_orders\{status="fulfilled",service="gateway"\} 1/);
    expect(text).toMatch(/gateway_queue_jobs\{queue="order-pipeline",state="waiting",service="gateway"\} \d+/);
    expect(text).toMatch(/gateway_catalog_age_seconds\{service="gateway"\} \d/);
    expect(text).toMatch(/gateway_provider_busy\{service="gateway"\} 0/);
    expect(text).toMatch(/gateway_webhook_deliveries_total\{outcome="unauthorized",service="gateway"\} 1/);
    expect(text).toMatch(/gateway_orders_needs_attention_oldest_seconds\{service="gateway"\} 0/);
    // Nothing secret in the exposition.
    for (const card of (await gw.settled(key, placed.body.id)).cards) expect(text).not.toContain(card.code);
  });
});
