import { afterEach, describe, expect, it } from 'vitest';
import { decodeSecret, verify } from '../../src/platform/standard-webhooks.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { call, control, initiate, login, startReceiver, startSandbox, WEBHOOK_SECRET, type Receiver, type ReceivedWebhook } from './helpers.js';

function verified(hook: ReceivedWebhook): boolean {
  return verify({ headers: hook.headers, rawBody: hook.rawBody, keys: [decodeSecret(WEBHOOK_SECRET)] }).ok;
}

type Events = { events: Array<{ id: string; type: string; state: string; attempts: Array<{ kind: string; http_status: number | null; ok: boolean }> }> };

describe('sandbox webhooks (upstream-webhooks.md)', () => {
  let sandbox: Sandbox;
  let receiver: Receiver;
  afterEach(async () => {
    await sandbox?.close();
    await receiver?.close();
  });

  async function setup(extra: { retryDelaysMs?: number[]; hold?: boolean } = {}): Promise<string> {
    receiver = await startReceiver();
    sandbox = await startSandbox({ webhook: { url: receiver.url, secrets: [WEBHOOK_SECRET], retryDelaysMs: extra.retryDelaysMs ?? [20, 20], hold: extra.hold } });
    return login(sandbox);
  }

  it('sends signed order.created and order.status_updated(pending) after initiate, without card data', async () => {
    const token = await setup();
    const id = (await initiate(sandbox, token, 101, 2, 900)).json.transaction_id;
    const hooks = await receiver.waitFor(2);
    expect(hooks.every(verified)).toBe(true);
    const byType = Object.fromEntries(hooks.map((h) => [h.body.type, h]));
    expect(byType['order.created']!.body.data).toEqual({ transaction_id: id, transaction_number: 900, card_id: 101, quantity: 2 });
    expect(byType['order.status_updated']!.body.data).toEqual({ transaction_id: id, transaction_number: 900, status: 'pending' });
    expect(hooks[0]!.headers['content-type']).toBe('application/json');
    expect(hooks[0]!.headers['webhook-id']).toMatch(/^msg_/);
    expect(Number.isNaN(Date.parse(hooks[0]!.body.timestamp))).toBe(false);
  });

  it('sends confirmed and finalized(completed, cards_count) after confirm, never card codes', async () => {
    const token = await setup();
    const id = (await initiate(sandbox, token, 101, 2, 901)).json.transaction_id as string;
    const confirm = await call(sandbox.url, 'confirm-order', { token, body: { transaction_id: id, total_amount: 19.98, payment_id: 'pay-9' } });
    const hooks = await receiver.waitFor(4);
    expect(hooks.every(verified)).toBe(true);
    const finalized = hooks.find((h) => h.body.type === 'order.finalized')!;
    expect(finalized.body.data).toEqual({ transaction_id: id, transaction_number: 901, status: 'completed', cards_count: 2 });
    expect(hooks.find((h) => h.body.type === 'order.status_updated' && h.body.data.status === 'confirmed')).toBeDefined();
    for (const card of confirm.json.data as Array<{ card_code: string }>) {
      expect(hooks.some((h) => h.rawBody.includes(card.card_code))).toBe(false);
    }
  });

  it('sends expired and finalized(cancelled) when a reservation expires or is cancelled', async () => {
    const token = await setup();
    const a = (await initiate(sandbox, token, 101, 1, 1)).json.transaction_id as string;
    const b = (await initiate(sandbox, token, 101, 1, 2)).json.transaction_id as string;
    await control(sandbox, 'POST', `/reservations/${a}/expire`);
    await control(sandbox, 'POST', `/reservations/${b}/cancel`);
    const hooks = await receiver.waitFor(8);
    const statuses = hooks.filter((h) => h.body.type === 'order.status_updated').map((h) => `${String(h.body.data.transaction_id)}:${String(h.body.data.status)}`);
    expect(statuses).toEqual(expect.arrayContaining([`${a}:expired`, `${b}:cancelled`]));
    const finals = hooks.filter((h) => h.body.type === 'order.finalized').map((h) => h.body.data);
    expect(finals).toEqual(expect.arrayContaining([{ transaction_id: a, transaction_number: 1, status: 'cancelled', cards_count: 0 }]));
  });

  it('sends busy_mode.activated with reason and until, then busy_mode.revoked', async () => {
    await setup();
    await control(sandbox, 'POST', '/busy', { active: true, reason: 'stock sync', until: '2099-01-01T00:00:00Z' });
    await control(sandbox, 'POST', '/busy', { active: false });
    const hooks = await receiver.waitFor(2);
    expect(hooks.map((h) => h.body.type).sort()).toEqual(['busy_mode.activated', 'busy_mode.revoked']);
    expect(hooks.find((h) => h.body.type === 'busy_mode.activated')!.body.data).toEqual({ reason: 'stock sync', until: '2099-01-01T00:00:00.000Z' });
    expect(hooks.find((h) => h.body.type === 'busy_mode.revoked')!.body.data).toEqual({});
  });

  it('retries non-2xx answers with back-off, keeping the webhook-id, until success', async () => {
    await setup({ retryDelaysMs: [30, 30, 30] });
    receiver.respond = (i) => (i < 2 ? 503 : 200);
    await control(sandbox, 'POST', '/busy', { active: true });
    const hooks = await receiver.waitFor(3);
    expect(new Set(hooks.map((h) => h.headers['webhook-id'])).size).toBe(1);
    expect(hooks.every(verified)).toBe(true);
    await sandbox.webhooks.idle();
    const events = await control<Events>(sandbox, 'GET', '/webhooks');
    expect(events.json.events[0]!.state).toBe('delivered');
    expect(events.json.events[0]!.attempts.map((a) => [a.kind, a.http_status])).toEqual([['initial', 503], ['retry', 503], ['retry', 200]]);
  });

  it('treats a receiver slower than timeoutMs as a failure and retries', async () => {
    receiver = await startReceiver();
    receiver.delay = (i) => (i === 0 ? 1_000 : 0);
    sandbox = await startSandbox({ webhook: { url: receiver.url, secrets: [WEBHOOK_SECRET], retryDelaysMs: [20], timeoutMs: 100 } });
    sandbox.control.setBusy(true);
    await receiver.waitFor(2);
    await sandbox.webhooks.idle();
    const [event] = sandbox.webhooks.list();
    expect(event!.attempts.map((a) => [a.kind, a.ok, a.error ?? null])).toEqual([['initial', false, 'timeout'], ['retry', true, null]]);
  });

  it('cancels pending retries on close', async () => {
    await setup({ retryDelaysMs: [60_000] });
    receiver.respond = () => 500;
    sandbox.control.setBusy(true);
    await receiver.waitFor(1);
    const t = performance.now();
    await sandbox.close();
    expect(performance.now() - t).toBeLessThan(1_000);
    expect(receiver.received).toHaveLength(1);
  });

  it('gives up after the bounded retries', async () => {
    await setup({ retryDelaysMs: [10, 10] });
    receiver.respond = () => 500;
    await control(sandbox, 'POST', '/busy', { active: true });
    await receiver.waitFor(3);
    await sandbox.webhooks.idle();
    await new Promise((r) => setTimeout(r, 50));
    expect(receiver.received).toHaveLength(3);
    expect(sandbox.webhooks.list()[0]!.state).toBe('failed');
  });

  it('redelivers an event with the same id and body, and duplicates it on demand', async () => {
    await setup();
    await control(sandbox, 'POST', '/busy', { active: true, reason: 'r' });
    const [first] = await receiver.waitFor(1);
    const id = first!.headers['webhook-id'] as string;
    expect((await control(sandbox, 'POST', `/webhooks/${id}/redeliver`)).status).toBe(200);
    expect((await control(sandbox, 'POST', `/webhooks/${id}/duplicate`, { count: 3 })).json).toEqual({ duplicated: id, count: 3 });
    const hooks = await receiver.waitFor(5);
    expect(hooks.map((h) => h.headers['webhook-id'])).toEqual([id, id, id, id, id]);
    expect(new Set(hooks.map((h) => h.rawBody)).size).toBe(1);
    expect(hooks.every(verified)).toBe(true);
    expect((await control(sandbox, 'POST', '/webhooks/msg_nope/redeliver')).status).toBe(404);
  });

  it('holds events and releases them in reverse or shuffled order', async () => {
    const token = await setup({ hold: true });
    await initiate(sandbox, token, 101, 1, 1);
    await control(sandbox, 'POST', '/busy', { active: true });
    expect(receiver.received).toHaveLength(0);
    const held = (await control<Events>(sandbox, 'GET', '/webhooks')).json.events;
    expect(held.map((e) => e.state)).toEqual(['held', 'held', 'held']);
    const released = await control<{ released: string[] }>(sandbox, 'POST', '/webhooks/release', { order: 'reverse' });
    expect(released.json.released).toEqual(held.map((e) => e.id).reverse());
    const hooks = await receiver.waitFor(3);
    expect(hooks.map((h) => h.body.type)).toEqual(['busy_mode.activated', 'order.status_updated', 'order.created']);
    expect(hooks.every(verified)).toBe(true);
  });

  it('signs with every configured secret during rotation', async () => {
    receiver = await startReceiver();
    const newSecret = `whsec_${Buffer.from('another-sandbox-secret-32-bytes!').toString('base64')}`;
    sandbox = await startSandbox({ webhook: { url: receiver.url, secrets: [newSecret, WEBHOOK_SECRET] } });
    sandbox.control.setBusy(true);
    const [hook] = await receiver.waitFor(1);
    expect((hook!.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(verify({ headers: hook!.headers, rawBody: hook!.rawBody, keys: [decodeSecret(newSecret)] }).ok).toBe(true);
    expect(verified(hook!)).toBe(true);
    const view = await control<{ settings: { secrets: string[] } }>(sandbox, 'GET', '/webhooks');
    expect(view.json.settings.secrets).toEqual(['[redacted]', '[redacted]']);
  });

  it('configures the webhook target at run time and refuses a URL without a secret', async () => {
    receiver = await startReceiver();
    sandbox = await startSandbox();
    expect((await control(sandbox, 'PUT', '/webhooks/config', { url: receiver.url })).status).toBe(400);
    expect((await control(sandbox, 'PUT', '/webhooks/config', { url: receiver.url, secrets: ['whsec_c2hvcnQ='] })).status).toBe(400);
    const ok = await control(sandbox, 'PUT', '/webhooks/config', { url: receiver.url, secrets: [WEBHOOK_SECRET] });
    expect(ok.json).toMatchObject({ url: receiver.url, secrets: ['[redacted]'], hold: false });
    sandbox.control.setBusy(true, { reason: 'now configured' });
    const [hook] = await receiver.waitFor(1);
    expect(verified(hook!)).toBe(true);
  });

  it('records events without sending when no URL is configured', async () => {
    sandbox = await startSandbox();
    sandbox.control.setBusy(true);
    const events = await control<Events>(sandbox, 'GET', '/webhooks');
    expect(events.json.events).toEqual([expect.objectContaining({ type: 'busy_mode.activated', state: 'no_endpoint', attempts: [] })]);
  });
});
