import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/platform/logger.js';
import { LogCapture } from './helpers/context.js';

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
});
