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
    expect(problems.map((p) => p.split(' ')[0]).sort()).toEqual(['CALLBACK_SIGNING_SECRET', 'CARD_CODE_KEYS', 'UPSTREAM_PRIVATE_KEY', 'UPSTREAM_USERNAME']);
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
        CALLBACK_SIGNING_SECRET: 'whsec_not-base64-but-secret!!',
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
    expect(message).toMatch(/CALLBACK_SIGNING_SECRET must be whsec_/);
    expect(message).not.toContain('not-base64-but-secret');
  });

  it('counts empty variables as unset', () => {
    const config = loadConfig({ PORT: '', HOST: ' ', DATABASE_POOL_MAX: '', MIGRATE_ON_START: '', UPSTREAM_BASE_URL: '' });
    expect(config.http.port).toBe(8080);
    expect(config.http.host).toBe('127.0.0.1');
    expect(config.databasePoolMax).toBe(10);
    expect(config.migrateOnStart).toBe(true);
    expect(config.upstream.baseUrl).toBeUndefined();
  });

  describe('in production', () => {
    const SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const provider = (baseUrl: string) => ({
      NODE_ENV: 'production',
      UPSTREAM_BASE_URL: baseUrl,
      UPSTREAM_USERNAME: 'merchant',
      UPSTREAM_PRIVATE_KEY: 'pk-live-secret',
      CARD_CODE_KEYS: `k1:${KEY}`,
      CALLBACK_SIGNING_SECRET: SECRET,
    });

    it('refuses to run against the built-in sandbox unless UPSTREAM_SANDBOX=true', () => {
      expect(problemsOf({ NODE_ENV: 'production' })).toEqual([expect.stringMatching(/^UPSTREAM_BASE_URL is required in production .*UPSTREAM_SANDBOX=true/)]);
      expect(problemsOf({ NODE_ENV: 'production', UPSTREAM_BASE_URL: '' })).toHaveLength(1);
      expect(loadConfig({ NODE_ENV: 'production', UPSTREAM_SANDBOX: 'true' }).upstream.baseUrl).toBeUndefined();
      expect(loadConfig({ NODE_ENV: 'development' }).upstream.baseUrl).toBeUndefined();
    });

    it('rejects UPSTREAM_SANDBOX=true together with a provider', () => {
      expect(problemsOf({ ...provider('https://provider.example'), UPSTREAM_SANDBOX: 'true' })).toEqual([expect.stringMatching(/^UPSTREAM_SANDBOX=true contradicts UPSTREAM_BASE_URL/)]);
    });

    it('refuses a cleartext provider URL unless it is on loopback', () => {
      expect(loadConfig(provider('https://provider.example/production770')).upstream.baseUrl).toBe('https://provider.example/production770');
      const problems = problemsOf(provider('http://provider.example/production770'));
      expect(problems).toEqual([expect.stringMatching(/^UPSTREAM_BASE_URL must use https: in production/)]);
      expect(problems[0]).not.toContain('provider.example');
      for (const loopback of ['http://127.0.0.1:9000', 'http://localhost:9000', 'http://[::1]:9000']) {
        expect(loadConfig(provider(loopback)).upstream.baseUrl).toBe(loopback);
      }
      expect(loadConfig({ ...provider('http://provider.example'), NODE_ENV: 'development' }).upstream.baseUrl).toBe('http://provider.example');
    });
  });

  it('validates UPSTREAM_WEBHOOK_SECRET like the callback secret, without echoing it', () => {
    const good = `whsec_${Buffer.alloc(24, 5).toString('base64')}`;
    expect(loadConfig({ UPSTREAM_WEBHOOK_SECRET: good }).upstream.webhookSecret).toBe(good);
    for (const bad of ['whsec_short-secret-value', `whsec_${Buffer.alloc(15, 5).toString('base64')}`, 'not base64 at all !!']) {
      const problems = problemsOf({ UPSTREAM_WEBHOOK_SECRET: bad });
      expect(problems).toEqual(['UPSTREAM_WEBHOOK_SECRET must be whsec_ followed by base64 of at least 16 random bytes']);
    }
    expect(problemsOf({ CALLBACK_SIGNING_SECRET: `whsec_${Buffer.alloc(15, 5).toString('base64')}` })[0]).toMatch(/^CALLBACK_SIGNING_SECRET must be whsec_/);
  });

  it('rejects duplicate or malformed key ids', () => {
    expect(problemsOf({ CARD_CODE_KEYS: `a:${KEY},a:${KEY}` })[0]).toMatch(/appears twice/);
    expect(problemsOf({ CARD_CODE_KEYS: KEY })[0]).toMatch(/id:base64key/);
  });

  it('keeps the order lease well above a provider call', () => {
    expect(loadConfig({}).orders.leaseMs).toBe(60_000);
    expect(problemsOf({ ORDER_LEASE_MS: '20000', UPSTREAM_TIMEOUT_MS: '15000' })).toEqual([
      'ORDER_LEASE_MS must be at least twice UPSTREAM_TIMEOUT_MS (a live worker must never lose an order while waiting on the provider)',
    ]);
  });
});
