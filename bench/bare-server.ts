import Fastify, { type FastifyInstance } from 'fastify';

export interface BareServer {
  url: string;
  app: FastifyInstance;
}

/**
 * The baseline: Fastify 5 with no plugins, no logger, one GET route answering a constant JSON
 * body. It shows what this machine and Node can do over loopback, so a benchmark reports the
 * gateway's cost as a ratio rather than as absolute numbers that differ from machine to machine.
 */
export async function startBareServer(path: string, body: unknown): Promise<BareServer> {
  const app = Fastify({ logger: false });
  app.get(path, async () => body);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `${url}${path}`, app };
}
