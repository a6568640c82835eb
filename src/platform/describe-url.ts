/** host:port/path of a connection URL without user or password, for messages and logs. */
export function describeUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}
