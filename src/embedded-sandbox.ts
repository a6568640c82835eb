import type { Config } from './config/index.js';
import type { Logger } from './platform/logger.js';
import { createSandbox } from './sandbox/index.js';

/**
 * With no UPSTREAM_BASE_URL, `gateway serve` runs the provider sandbox in-process on loopback,
 * so the quick start needs no provider account. Its credentials are the configured ones (the
 * sandbox defaults when unset), so the gateway authenticates exactly as it would upstream.
 */
export async function startEmbeddedSandbox({ config, log }: { config: Config; log: Logger }) {
  const sandbox = await createSandbox({
    username: config.upstream.username,
    privateKey: config.upstream.privateKey,
    logger: log.child({ component: 'sandbox' }),
  });
  const url = await sandbox.listen({ port: config.sandbox.port, host: '127.0.0.1' });
  log.warn({ sandbox: url }, 'UPSTREAM_BASE_URL not set: using the built-in provider sandbox (no real cards, no real money)');
  return {
    url,
    close: () => sandbox.close(),
    /** Sends the sandbox's (signed) webhooks to the gateway itself, once it listens. */
    deliverWebhooksTo: (webhookUrl: string, secrets: string[]) => {
      sandbox.control.configureWebhooks({ url: webhookUrl, secrets });
    },
  };
}
