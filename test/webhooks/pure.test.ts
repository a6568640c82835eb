import { describe, expect, it } from 'vitest';
import { loadConfig, type ConfigError } from '../../src/config/index.js';
import { generateSecret, signedHeaders } from '../../src/platform/standard-webhooks.js';
import { createSourceAllowList, createStandardTopicMapper, createStandardWebhooksVerifier, stripCardCodes, webhookJobId } from '../../src/webhooks/index.js';

describe('webhook configuration', () => {
  const a = generateSecret();
  const b = generateSecret();

  it('has defaults: no secret, any source, 64 KiB, 300 s', () => {
    expect(loadConfig({}).webhooks).toEqual({ secrets: [], allowedIps: undefined, maxBodyBytes: 65_536, toleranceSeconds: 300, devSecretFile: '.data/upstream-webhook-secret.dev' });
  });

  it('reads several secrets (current first), an allow-list, the body limit and the tolerance', () => {
    const config = loadConfig({ UPSTREAM_WEBHOOK_SECRET: ` ${a} , ${b} `, UPSTREAM_WEBHOOK_ALLOWED_IPS: '203.0.113.7, 198.51.100.0/24,2001:db8::/32', WEBHOOK_MAX_BODY_BYTES: '4096', WEBHOOK_TOLERANCE_SECONDS: '120' });
    expect(config.webhooks).toMatchObject({ secrets: [a, b], allowedIps: ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'], maxBodyBytes: 4096, toleranceSeconds: 120 });
    expect(config.upstream.webhookSecret).toBe(a);
  });

  it('refuses a bad secret anywhere in the list, a bad address and bad numbers, without echoing secrets', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    const bad = problems({ UPSTREAM_WEBHOOK_SECRET: `${a},whsec_c2hvcnQ=` });
    expect(bad).toEqual(['UPSTREAM_WEBHOOK_SECRET must be whsec_ followed by base64 of at least 16 random bytes']);
    expect(bad.join()).not.toContain(a);
    expect(problems({ UPSTREAM_WEBHOOK_ALLOWED_IPS: '10.0.0.0/33,example.com,10.1.2.3' })).toEqual([
      'UPSTREAM_WEBHOOK_ALLOWED_IPS must list IP addresses or CIDR ranges (comma-separated); not one: 10.0.0.0/33, example.com',
    ]);
    expect(problems({ WEBHOOK_MAX_BODY_BYTES: '10', WEBHOOK_TOLERANCE_SECONDS: 'soon' }).sort()).toEqual([
      'WEBHOOK_MAX_BODY_BYTES must be a whole number from 1024 to 10485760',
      'WEBHOOK_TOLERANCE_SECONDS must be a whole number from 1 to 3600',
    ]);
  });
});

describe('Standard Webhooks verifier', () => {
  const secret = generateSecret();
  const now = 1_800_000_000;
  const verifier = createStandardWebhooksVerifier({ secrets: [secret], now: () => now * 1000 });
  const body = '{"type":"busy_mode.revoked","data":{}}';

  it('returns the event id and signing time of a valid delivery', () => {
    const headers = { ...signedHeaders([secret], 'msg_1', body, now) };
    expect(verifier.verify({ headers, rawBody: Buffer.from(body), sourceIp: '127.0.0.1' })).toEqual({ ok: true, id: 'msg_1', signedAt: new Date(now * 1000) });
  });

  it('says why a delivery is refused', () => {
    const headers = { ...signedHeaders([secret], 'msg_1', body, now) };
    expect(verifier.verify({ headers: { ...headers, 'webhook-id': 'msg_2' }, rawBody: Buffer.from(body), sourceIp: '' })).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifier.verify({ headers: { ...signedHeaders([secret], 'msg_1', body, now - 301) }, rawBody: Buffer.from(body), sourceIp: '' })).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(verifier.verify({ headers: {}, rawBody: Buffer.from(body), sourceIp: '' })).toEqual({ ok: false, reason: 'missing_headers' });
  });

  it('refuses to start without a secret, or with a short one', () => {
    expect(() => createStandardWebhooksVerifier({ secrets: [] })).toThrow(/at least one secret/);
    expect(() => createStandardWebhooksVerifier({ secrets: ['whsec_c2hvcnQ='] })).toThrow(/16 bytes/);
  });
});

describe('topic mapping (upstream-webhooks.md)', () => {
  const mapper = createStandardTopicMapper();

  it('maps the five documented types and nothing else', () => {
    expect(['order.status_updated', 'order.created', 'order.finalized', 'busy_mode.activated', 'busy_mode.revoked'].map((t) => mapper.topicOf(t))).toEqual([
      'order_status',
      'order_created',
      'order_final',
      'busy_on',
      'busy_off',
    ]);
    for (const t of ['order.deleted', '', 'toString', '__proto__', 'ORDER.CREATED']) expect(mapper.topicOf(t), t).toBeUndefined();
  });

  it('reads type, timestamp and data, tolerating odd bodies', () => {
    expect(mapper.eventOf({ type: 'order.created', timestamp: '2026-11-21T10:00:00Z', data: { a: 1 } })).toEqual({ type: 'order.created', occurredAt: new Date('2026-11-21T10:00:00Z'), data: { a: 1 } });
    expect(mapper.eventOf({ type: 'x', timestamp: 'yesterday' })).toEqual({ type: 'x', data: {} });
    expect(mapper.eventOf({ type: 42 })).toEqual({ type: '', data: {} });
    expect(mapper.eventOf('hello')).toEqual({ type: '', data: 'hello' });
    expect(mapper.eventOf(null)).toEqual({ type: '', data: null });
  });
});

describe('source allow-list', () => {
  const allowed = createSourceAllowList(['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);

  it('matches addresses and ranges, IPv4-mapped IPv6 as IPv4', () => {
    for (const ip of ['203.0.113.7', '198.51.100.200', '::ffff:198.51.100.1', '2001:db8::1']) expect(allowed(ip), ip).toBe(true);
    for (const ip of ['203.0.113.8', '198.51.101.1', '127.0.0.1', '::1', '', 'garbage']) expect(allowed(ip), ip).toBe(false);
  });

  it('refuses an entry that is not an address', () => {
    expect(() => createSourceAllowList(['example.com'])).toThrow(/not an IP/);
  });
});

describe('stripCardCodes', () => {
  it('removes code fields wherever they are, and codes inside card lists', () => {
    const input = {
      type: 'order.finalized',
      code: '11111',
      data: { card_code: 'A1', cardCode: 'A2', 'card-codes': ['A3'], PIN: 'A4', cards: [{ serial: 'SN1', code: 'A5', codes: ['A6'] }, 'A7'], card: { code: 'A8', number: 'SN2' }, nested: [{ redemption_code: 'A9' }] },
    };
    const { value, removed } = stripCardCodes(input);
    const text = JSON.stringify(value);
    for (const code of ['A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'A7', 'A8', 'A9']) expect(text, code).not.toContain(`"${code}"`);
    expect(removed).toBe(9);
    // A provider status code outside any card list is not a card code.
    expect(value.code).toBe('11111');
    expect(value.data.cards[0]).toEqual({ serial: 'SN1' });
    expect(value.data.card).toEqual({ number: 'SN2' });
    expect(input.data.card_code).toBe('A1');
  });

  it('leaves clean payloads as they are', () => {
    const body = { type: 'order.created', data: { transaction_id: 'TXN-1', transaction_number: 7, card_id: 301, quantity: 2 } };
    expect(stripCardCodes(body)).toEqual({ value: body, removed: 0 });
    expect(stripCardCodes(JSON.parse('{"__proto__":{"x":1}}')).value).toHaveProperty('__proto__', { x: 1 });
  });
});

describe('webhookJobId', () => {
  it('is the event id when BullMQ takes it as is, else a stable digest', () => {
    expect(webhookJobId('msg_2a8f')).toBe('msg_2a8f');
    expect(webhookJobId('12345')).toMatch(/^wh-[0-9a-f]{64}$/);
    expect(webhookJobId('evt:1')).toBe(webhookJobId('evt:1'));
    expect(webhookJobId('evt:1')).not.toBe(webhookJobId('evt:2'));
  });
});
