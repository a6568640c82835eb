import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/platform/logger.js';
import { LogCapture } from './helpers/context.js';

function logged(write: (log: ReturnType<typeof createLogger>) => void): string {
  const logs = new LogCapture();
  write(createLogger('debug', logs));
  expect(logs.lines).toHaveLength(1);
  return logs.text;
}

describe('log redaction', () => {
  it('redacts secrets wherever a log call puts them', () => {
    const logs = new LogCapture();
    const log = createLogger('debug', logs);
    log.info({ password: 'pk-1', privateKey: 'pk-2', token: 'tok-3', authorization: 'Bearer gwk_4' }, 'top level');
    log.info({ upstream: { password: 'pk-5', token: 'tok-6', card_code: 'CODE-7' } }, 'nested');
    log.info({ order: { cards: [{ code: 'CODE-8', number: 'SN-1' }] } }, 'cards');
    log.info({ req: { headers: { authorization: 'Bearer gwk_9', token: 'tok-10' } } }, 'request');
    expect(logs.lines).toHaveLength(4);
    for (const secret of ['pk-1', 'pk-2', 'tok-3', 'gwk_4', 'pk-5', 'tok-6', 'CODE-7', 'CODE-8', 'gwk_9', 'tok-10']) {
      expect(logs.text).not.toContain(secret);
    }
    expect(logs.text).toContain('[redacted]');
    expect(logs.text).toContain('SN-1');
  });

  // Third column: the secret(s) that must not appear, separated by |.
  it.each<[string, Record<string, unknown>, string]>([
    ['the provider confirm body', { status: true, code: '11111', data: [{ card_code: 'CODE-A1', card_number: 'SN-A' }] }, 'CODE-A1'],
    ['the provider confirm body under a key', { response: { data: [{ card_code: 'CODE-A2', card_number: 'SN-A' }] } }, 'CODE-A2'],
    ['parsed cards', { cards: [{ cardCode: 'CODE-B1', cardNumber: 'SN-A' }] }, 'CODE-B1'],
    ['parsed cards under a key', { result: { cards: [{ cardCode: 'CODE-B2', cardNumber: 'SN-A' }] } }, 'CODE-B2'],
    ['stored cards', { cards: [{ card_code: 'CODE-B3', number: 'SN-A' }] }, 'CODE-B3'],
    ['a config two levels down', { config: { upstream: { privateKey: 'pk-C1', username: 'SN-A' } } }, 'pk-C1'],
    ['a password two levels down', { a: { b: { password: 'pw-C2' } } }, 'pw-C2'],
    ['a token two levels down', { a: { b: { token: 'tok-C3' } } }, 'tok-C3'],
    ['an error cause', { err: { message: 'SN-A', cause: { token: 'tok-D1' } } }, 'tok-D1'],
    ['card-code keys', { cardCodeKeys: [{ id: 'k1', key: 'KEY-E1' }] }, 'KEY-E1'],
    ['card-code keys in a config', { config: { cardCodeKeys: [{ id: 'k1', key: 'KEY-E2' }] } }, 'KEY-E2'],
    ['the callback signing secret', { callbacks: { signingSecret: 'whsec_F1' } }, 'whsec_F1'],
    ['the callback signing secret in a config', { config: { callbacks: { signingSecret: 'whsec_F2' } } }, 'whsec_F2'],
    ['the provider webhook secret', { upstream: { webhookSecret: 'whsec_F3' } }, 'whsec_F3'],
    ['the provider webhook secret in a config', { config: { upstream: { webhookSecret: 'whsec_F4' } } }, 'whsec_F4'],
    ['secret environment variables', { env: { CARD_CODE_KEYS: 'k1:G1', UPSTREAM_PRIVATE_KEY: 'pk-G2', CALLBACK_SIGNING_SECRET: 'whsec_G3', UPSTREAM_WEBHOOK_SECRET: 'whsec_G4' } }, 'G1|pk-G2|whsec_G3|whsec_G4'],
    ['a database URL with its password', { config: { databaseUrl: 'postgresql://u:hunter2@db/x' } }, 'hunter2'],
    ['a webhook signature header', { req: { headers: { 'webhook-signature': 'v1,SIG-H1' } } }, 'SIG-H1'],
  ])('redacts %s', (_label, object, secret) => {
    const text = logged((log) => log.info(object, 'probe'));
    for (const s of secret.split('|')) expect(text).not.toContain(s);
    expect(text).toContain('[redacted]');
  });

  it('keeps what is not secret', () => {
    const text = logged((log) => log.info({ data: [{ card_code: 'CODE-Z', card_number: 'SN-Z' }], orderId: 'o-1' }, 'probe'));
    expect(text).toContain('SN-Z');
    expect(text).toContain('o-1');
    expect(text).not.toContain('CODE-Z');
  });
});
