/**
 * Pure access checks: the IP allow-list (section 1 and 8: access only from registered
 * addresses) and reading the session token from headers (section 5).
 */

export const LOOPBACK_IPS = ['127.0.0.1', '::1', '::ffff:127.0.0.1'];

/** IPv4-mapped IPv6 addresses compare equal to their IPv4 form, so one entry covers both stacks. */
export function normaliseIp(ip: string): string {
  const lower = ip.trim().toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice('::ffff:'.length) : lower;
}

export function isIpAllowed(ip: string, allowed: readonly string[]): boolean {
  const candidate = normaliseIp(ip);
  return allowed.some((entry) => normaliseIp(entry) === candidate);
}

export type TokenRead = { kind: 'missing' } | { kind: 'bearer' | 'bare'; token: string };

/**
 * The spec states three places for the token; it asks servers to accept it in `Authorization`
 * with or without `Bearer `. The sandbox accepts exactly that and nothing else, so a client that
 * only sends the `Token` header (one reading of the getting-started text) fails here too.
 */
export function readAuthorization(header: string | string[] | undefined): TokenRead {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return { kind: 'missing' };
  const bearer = /^bearer\s+(.+)$/i.exec(value);
  if (bearer) return { kind: 'bearer', token: bearer[1]!.trim() };
  return { kind: 'bare', token: value };
}

/** The `Token` header must be present (its value is a fixed literal in the spec and is not checked). */
export function hasTokenHeader(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && value.trim() !== '';
}
