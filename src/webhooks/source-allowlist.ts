import { BlockList, isIP } from 'node:net';

/**
 * The addresses the provider delivers from, when the operator knows them: a cheap first filter in
 * front of the signature (which alone decides authenticity). IPv4-mapped IPv6 addresses
 * (`::ffff:203.0.113.7`, what a dual-stack listener reports) match their IPv4 form.
 */
export function createSourceAllowList(entries: readonly string[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address);
    if (family === 0) throw new Error(`not an IP address or CIDR range: ${entry}`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return (ip) => {
    const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
    const address = mapped ? mapped[1]! : ip;
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
}
