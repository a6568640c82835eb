import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { createLogger } from '../platform/logger.js';
import { runSandboxCommand } from '../sandbox/index.js';
import { CliError, withContext } from './context.js';
import { out } from './output.js';

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return n;
}

function basePath(value: string): string {
  if (value !== '' && !/^(\/[A-Za-z0-9._~-]+)+$/.test(value)) throw new InvalidArgumentError('must look like /production770');
  return value;
}

function httpUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // fall through
  }
  throw new InvalidArgumentError('must be an http(s) URL');
}

export function registerSandboxCommand(program: Command): void {
  program
    .command('sandbox')
    .description('serve the provider sandbox alone (credentials: UPSTREAM_USERNAME / UPSTREAM_PRIVATE_KEY, or the sandbox defaults)')
    .option('--port <port>', 'port to listen on', port, 8090)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--base-path <path>', 'serve under a Production-style base path, e.g. /production770', basePath, '')
    .option('--webhook-url <url>', 'POST signed provider webhooks here', httpUrl)
    .action((opts: { port: number; host: string; basePath: string; webhookUrl?: string }) =>
      withContext(async ({ config }) => {
        const secret = config.upstream.webhookSecret;
        if (opts.webhookUrl && !secret) throw new CliError('--webhook-url needs UPSTREAM_WEBHOOK_SECRET (whsec_…) to sign the deliveries');
        const running = await runSandboxCommand({
          port: opts.port,
          host: opts.host,
          basePath: opts.basePath,
          logger: createLogger(config.logLevel),
          options: { username: config.upstream.username, privateKey: config.upstream.privateKey },
          ...(opts.webhookUrl && secret ? { webhookUrl: opts.webhookUrl, webhookSecrets: [secret] } : {}),
        });
        out(`provider sandbox listening at ${running.url}`);
        await running.done;
      }),
    );
}
