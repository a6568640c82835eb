import { describe, expect, it } from 'vitest';
import { createTokenCache } from '../../src/upstream/token-cache.js';

function deferredLogins() {
  const pending: Array<{ resolve: (t: string) => void; reject: (e: Error) => void }> = [];
  const login = () =>
    new Promise<string>((resolve, reject) => {
      pending.push({ resolve, reject });
    });
  return { login, pending };
}

describe('createTokenCache', () => {
  it('shares one login between concurrent callers and caches the result', async () => {
    const { login, pending } = deferredLogins();
    const cache = createTokenCache({ login, now: () => 0 });
    const all = Promise.all(Array.from({ length: 50 }, () => cache.get()));
    expect(pending).toHaveLength(1);
    pending[0]!.resolve('t1');
    expect(new Set(await all)).toEqual(new Set(['t1']));
    expect(await cache.get()).toBe('t1');
    expect(pending).toHaveLength(1);
  });

  it('invalidating the stale token triggers one new login; late invalidations of the same token do nothing', async () => {
    const { login, pending } = deferredLogins();
    const cache = createTokenCache({ login, now: () => 0 });
    const first = cache.get();
    pending[0]!.resolve('t1');
    await first;

    for (let i = 0; i < 50; i++) cache.invalidate('t1');
    const again = Promise.all(Array.from({ length: 50 }, () => cache.get()));
    expect(pending).toHaveLength(2);
    pending[1]!.resolve('t2');
    expect(new Set(await again)).toEqual(new Set(['t2']));

    cache.invalidate('t1');
    expect(await cache.get()).toBe('t2');
    expect(pending).toHaveLength(2);
  });

  it('a failed login fails every waiter once, and the next caller tries again', async () => {
    const { login, pending } = deferredLogins();
    const cache = createTokenCache({ login, now: () => 0 });
    const waiters = [cache.get(), cache.get()];
    pending[0]!.reject(new Error('down'));
    for (const w of waiters) await expect(w).rejects.toThrow('down');
    const next = cache.get();
    expect(pending).toHaveLength(2);
    pending[1]!.resolve('t2');
    expect(await next).toBe('t2');
  });

  it('refresh replaces a cached token, joining a login already in flight', async () => {
    const { login, pending } = deferredLogins();
    const cache = createTokenCache({ login, now: () => 0 });
    const a = cache.get();
    const b = cache.refresh();
    expect(pending).toHaveLength(1);
    pending[0]!.resolve('t1');
    expect([await a, await b]).toEqual(['t1', 't1']);
    const c = cache.refresh();
    expect(pending).toHaveLength(2);
    pending[1]!.resolve('t2');
    expect(await c).toBe('t2');
  });

  it('with maxAgeMs, an old token is replaced before use', async () => {
    let now = 0;
    let n = 0;
    const cache = createTokenCache({ login: async () => `t${++n}`, now: () => now, maxAgeMs: 1_000 });
    expect(await cache.get()).toBe('t1');
    now = 999;
    expect(await cache.get()).toBe('t1');
    now = 1_000;
    expect(await cache.get()).toBe('t2');
  });
});
