/** Scopes an API key can carry (gateway-contract.md). `admin` grants every other scope. */
export const SCOPES = [
  'catalog:read',
  'orders:write',
  'orders:read',
  'support:read',
  'support:reveal',
  'support:write',
  'admin',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** True when a key holding `held` may use a route that needs any one of `needed`. */
export function hasAnyScope(held: readonly string[], needed: readonly Scope[]): boolean {
  if (held.includes('admin')) return true;
  return needed.some((scope) => held.includes(scope));
}

/** Parses `a,b,c`; returns the unknown names, if any, so the caller can say which are wrong. */
export function parseScopes(raw: string): { scopes: Scope[]; unknown: string[] } {
  const names = [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))];
  return { scopes: names.filter(isScope), unknown: names.filter((n) => !isScope(n)) };
}
