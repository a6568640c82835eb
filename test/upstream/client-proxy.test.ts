import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './sandbox-harness.js';

/**
 * Egress through an HTTP CONNECT proxy (deployments whose registered IP is the proxy's): a minimal
 * forward proxy on loopback that records the tunnels it opened.
 */
describe('proxyUrl', () => {
  let h: Harness;
  let proxy: Server;
  let proxyUrl: string;
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    h = await startHarness({ basePath: '/production770' });
    proxy = createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req, client: Socket, head: Buffer) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => s.destroy());
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await h.close();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => proxy.close(resolve));
  });

  it('sends every call through the proxy tunnel, reusing it (keep-alive)', async () => {
    const { client } = h.client({ proxyUrl });
    const vendors = await client.getCardList();
    await client.getBalance('101');
    await client.getBalance('101');
    await client.getBalance('101');
    expect(vendors.length).toBeGreaterThan(0);
    const origin = new URL(h.url).host;
    const calls = await h.calls();
    expect(calls.map((c) => c.endpoint)).toEqual(['login', 'get-card-list', 'get-balance-details', 'get-balance-details', 'get-balance-details']);
    // Every call went through a tunnel to the provider, and tunnels were reused, not one per call.
    expect(new Set(tunnels)).toEqual(new Set([origin]));
    expect(tunnels.length).toBeLessThan(calls.length);
  });
});
