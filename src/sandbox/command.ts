import type { Logger } from 'pino';
import { createSandbox, type Sandbox, type SandboxOptions } from './create-sandbox.js';

/**
 * What `gateway sandbox --port N [--base-path /production770] [--webhook-url U]` runs. It starts
 * the sandbox, logs where it listens (never credentials or secrets), and stops it on SIGINT or
 * SIGTERM unless the caller manages signals itself.
 */

export interface SandboxCommandOptions {
  port?: number;
  host?: string;
  basePath?: string;
  webhookUrl?: string;
  /** Required with webhookUrl: `whsec_…` secrets (first = current), e.g. UPSTREAM_WEBHOOK_SECRET. */
  webhookSecrets?: string[];
  catalogPath?: string;
  /** Extra addresses allowed to call the provider API besides loopback. */
  allowedIps?: string[];
  logger: Logger;
  /** Default true: close on SIGINT/SIGTERM and resolve `done`. */
  handleSignals?: boolean;
  /** Anything else SandboxOptions offers (faults, behaviour, TTLs…). */
  options?: Omit<SandboxOptions, 'basePath' | 'catalog' | 'webhook' | 'logger' | 'allowedIps'>;
}

export interface RunningSandbox {
  sandbox: Sandbox;
  url: string;
  /** Resolves once the sandbox has been closed (by a signal or by `sandbox.close()`). */
  done: Promise<void>;
}

export async function runSandboxCommand(opts: SandboxCommandOptions): Promise<RunningSandbox> {
  if (opts.webhookUrl && (!opts.webhookSecrets || opts.webhookSecrets.length === 0)) {
    throw new Error('--webhook-url needs a webhook secret (whsec_…) to sign deliveries');
  }
  const sandbox = await createSandbox({
    ...opts.options,
    basePath: opts.basePath ?? '',
    catalog: opts.catalogPath,
    logger: opts.logger,
    allowedIps: [...new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1', ...(opts.allowedIps ?? [])])],
    webhook: opts.webhookUrl ? { url: opts.webhookUrl, secrets: opts.webhookSecrets ?? [] } : undefined,
  });
  const url = await sandbox.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });
  opts.logger.info({ url, controlUrl: sandbox.controlUrl, webhookUrl: opts.webhookUrl ?? null }, 'provider sandbox listening');

  const onSignal = (signal: NodeJS.Signals): void => {
    opts.logger.info({ signal }, 'provider sandbox stopping');
    void sandbox.close();
  };
  if (opts.handleSignals !== false) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    void sandbox.closed.then(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });
  }
  return { sandbox, url, done: sandbox.closed };
}
