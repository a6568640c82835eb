/**
 * RFC 9110 If-None-Match for GET: true when any listed entity tag matches (weak comparison,
 * so `W/"x"` matches `"x"`), or the header is `*`.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  const target = strip(etag);
  return header.split(',').some((tag) => strip(tag) === target);
}
