import { randomBytes } from 'node:crypto';

/**
 * Session tokens (upstream-api.md section 5). Lifetime is not shown in the spec; the sandbox
 * makes it configurable and expires tokens by absolute time from issue (no sliding renewal),
 * which is the stricter reading: a client must handle 10000 mid-session and log in again.
 */

export interface SessionToken {
  expiresAt: number;
  issuedAt: number;
}

export class TokenStore {
  private readonly tokens = new Map<string, SessionToken>();

  issue(now: number, ttlMs: number, revokeOthers: boolean): string {
    if (revokeOthers) this.tokens.clear();
    this.prune(now);
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { issuedAt: now, expiresAt: now + ttlMs });
    return token;
  }

  isValid(token: string, now: number): boolean {
    const entry = this.tokens.get(token);
    return entry !== undefined && entry.expiresAt > now;
  }

  /** Ends every session now (fault injection: "all tokens expire"). Returns how many were live. */
  expireAll(now: number): number {
    let live = 0;
    for (const entry of this.tokens.values()) if (entry.expiresAt > now) live++;
    this.tokens.clear();
    return live;
  }

  count(now: number): number {
    this.prune(now);
    return this.tokens.size;
  }

  private prune(now: number): void {
    for (const [token, entry] of this.tokens) if (entry.expiresAt <= now) this.tokens.delete(token);
  }
}
