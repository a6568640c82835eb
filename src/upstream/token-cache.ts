import type { UpstreamCallRecord } from './types.js';
/**
 * The session token, shared by every call of a client. At most one login is in flight at any
 * time (single-flight): concurrent callers that find no usable token, or that all see 10000 for
 * the same stale token, wait for the same login instead of each starting one — N logins could
 * otherwise revoke each other's tokens if the provider keeps one session per merchant.
 */
export interface TokenCache {
  /**
   * A usable token: the cached one, or the result of the (shared) login. A login this call
   * starts reports its attempts to `onCall` too (the call that needed it, e.g. for an order's
   * timeline); one it joins is reported to the caller that started it.
   */
  get(onCall?: (record: UpstreamCallRecord) => void): Promise<string>;
  /**
   * Forget `stale` because the provider rejected it. A no-op when the cache already holds a newer
   * token, so late 10000 answers for an old token do not trigger another login.
   */
  invalidate(stale: string): void;
  /** Log in now even if a token is cached (joins a login already in flight). */
  refresh(): Promise<string>;
}

export interface TokenCacheOptions {
  login: (onCall?: (record: UpstreamCallRecord) => void) => Promise<string>;
  now: () => number;
  /** Replace a token older than this before using it; undefined = only on rejection. */
  maxAgeMs?: number;
}

export function createTokenCache(options: TokenCacheOptions): TokenCache {
  let current: { token: string; obtainedAt: number } | undefined;
  let inflight: Promise<string> | undefined;

  function startLogin(onCall?: (record: UpstreamCallRecord) => void): Promise<string> {
    inflight ??= options
      .login(onCall)
      .then((token) => {
        current = { token, obtainedAt: options.now() };
        return token;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  }

  function fresh(): boolean {
    if (!current) return false;
    return options.maxAgeMs === undefined || options.now() - current.obtainedAt < options.maxAgeMs;
  }

  return {
    get: (onCall) => (inflight ? inflight : fresh() && current ? Promise.resolve(current.token) : startLogin(onCall)),
    invalidate(stale) {
      if (current?.token === stale) current = undefined;
    },
    refresh() {
      current = undefined;
      return startLogin();
    },
  };
}
