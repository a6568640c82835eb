import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SANDBOX_DEFAULT_USERNAME } from '../src/config/index.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('configuration', () => {
  it('applies the contract defaults with nothing set', () => {
    const config = loadConfig({});
    expect(config.http).toEqual({ host: '127.0.0.1', port: 8080, trustProxy: false });
    expect(config.databaseUrl).toBe('postgresql://postgres@127.0.0.1:5432/gateway');
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.upstream.baseUrl).toBeUndefined();
    expect(config.upstream.username).toBe(SANDBOX_DEFAULT_USERNAME);
    expect(config.catalog.syncCron).toBe('0 3 * * *');
    expect(config.migrateOnStart).toBe(true);
    expect(config.orders.maxQuantity).toBe(10);
    expect(config.cardCodeKeys).toBeUndefined();
  });

  it('parses CARD_CODE_KEYS with the first key current', () => {
    const other = Buffer.alloc(32, 9).toString('base64');
    const config = loadConfig({ CARD_CODE_KEYS: `k2:${KEY}, k1:${other}` });
    expect(config.cardCodeKeys?.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(Buffer.from(config.cardCodeKeys![0]!.key).equals(Buffer.alloc(32, 7))).toBe(true);
  });

  it('reports one line per problem, naming each variable', () => {
    const problems = problemsOf({ PORT: 'eighty', REDIS_URL: 'http://nope', MIGRATE_ON_START: 'maybe', CATALOG_SYNC_CRON: 'every day', TZ: 'Mars/Olympus' });
    expect(problems).toHaveLength(5);
    expect(problems.find((p) => p.startsWith('PORT '))).toMatch(/whole number/);
    expect(problems.find((p) => p.startsWith('REDIS_URL '))).toMatch(/redis:/);
    expect(problems.find((p) => p.startsWith('MIGRATE_ON_START '))).toMatch(/true or false/);
    expect(problems.find((p) => p.startsWith('CATALOG_SYNC_CRON '))).toMatch(/cron/);
    expect(problems.find((p) => p.startsWith('TZ '))).toMatch(/time zone/);
  });

  it('requires credentials and card-code keys when a real provider is configured', () => {
    const problems = problemsOf({ UPSTREAM_BASE_URL: 'https://provider.example/production770' });
    expect(problems.map((p) => p.split(' ')[0]).sort()).toEqual(['CARD_CODE_KEYS', 'UPSTREAM_PRIVATE_KEY', 'UPSTREAM_USERNAME']);
  });

  it('never echoes secret values in its problems', () => {
    const privateKey = 'pk-live-DO-NOT-PRINT-1234567890';
    const badKeys = 'k1:c2VjcmV0LXNob3J0LWtleQ==';
    let message = '';
    try {
      loadConfig({
        UPSTREAM_BASE_URL: 'https://provider.example',
        UPSTREAM_USERNAME: 'merchant',
        UPSTREAM_PRIVATE_KEY: privateKey,
        CARD_CODE_KEYS: badKeys,
        DATABASE_URL: 'mysql://user:hunter2@db/x',
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/CARD_CODE_KEYS key "k1" must be 32 bytes/);
    expect(message).toMatch(/DATABASE_URL /);
    expect(message).not.toContain(privateKey);
    expect(message).not.toContain('c2VjcmV0LXNob3J0LWtleQ');
    expect(message).not.toContain('hunter2');
  });

  it('rejects duplicate or malformed key ids', () => {
    expect(problemsOf({ CARD_CODE_KEYS: `a:${KEY},a:${KEY}` })[0]).toMatch(/appears twice/);
    expect(problemsOf({ CARD_CODE_KEYS: KEY })[0]).toMatch(/id:base64key/);
  });
});
