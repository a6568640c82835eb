/**
 * The session token, shared by every call of a client. At most one login is in flight at any
 * time (single-flight): concurrent callers that find no usable token, or that all see 10000 for
 * the same stale token, wait for the same login instead of each starting one — N logins could
 * otherwise revoke each other's tokens if the provider keeps one session per merchant.
 */
export interface TokenCache {
  /** A usable token: the cached one, or the result of the (shared) login. */
  get(): Promise<string>;
  /**
   * Forget `stale` because the provider rejected it. A no-op when the cache already holds a newer
   * token, so late 10000 answers for an old token do not trigger another login.
   */
  invalidate(stale: string): void;
  /** Log in now even if a token is cached (joins a login already in flight). */
  refresh(): Promise<string>;
}

export interface TokenCacheOptions {
  login: () => Promise<string>;
  now: () => number;
  /** Replace a token older than this before using it; undefined = only on rejection. */
  maxAgeMs?: number;
}

export function createTokenCache(options: TokenCacheOptions): TokenCache {
  let current: { token: string; obtainedAt: number } | undefined;
  let inflight: Promise<string> | undefined;

  function startLogin(): Promise<string> {
    inflight ??= options
      .login()
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
    get: () => (inflight ? inflight : fresh() && current ? Promise.resolve(current.token) : startLogin()),
    invalidate(stale) {
      if (current?.token === stale) current = undefined;
    },
    refresh() {
      current = undefined;
      return startLogin();
    },
  };
}
