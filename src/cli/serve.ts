import type { Command } from 'commander';
import { Option } from 'commander';
import { onSignals } from '../platform/shutdown.js';
import { ROLES, serve, type Role } from '../serve.js';
import { withContext } from './context.js';
import { createLogger } from '../platform/logger.js';
import { migrate } from '../platform/migrate.js';
import { describeUrl } from '../platform/describe-url.js';
import { out } from './output.js';

export function registerServeCommands(program: Command): void {
  program
    .command('serve')
    .description('run the gateway: HTTP API, workers and scheduler (all unless --role is given)')
    .addOption(new Option('--role <role...>', 'run only these parts (repeatable)').choices(ROLES))
    .action((opts: { role?: Role[] }) =>
      withContext(async ({ config }) => {
        // The server logs JSON to stdout, as a container platform expects.
        const log = createLogger(config.logLevel);
        const roles = opts.role && opts.role.length > 0 ? [...new Set(opts.role)] : [...ROLES];
        const running = await serve(config, roles, log);
        onSignals(running.shutdown, log);
        // Only now: whoever waits for this line may signal the process at once.
        log.info({ roles, url: running.url, upstream: describeUrl(running.upstreamUrl) }, 'gateway started');
      }),
    );

  program
    .command('migrate')
    .description('create the database if needed and apply pending migrations')
    .action(() =>
      withContext(
        async ({ config, log }) => {
          const result = await migrate(config.databaseUrl, { log });
          out(
            result.applied.length > 0
              ? `applied ${result.applied.length} migration(s) to ${describeUrl(config.databaseUrl)}: ${result.applied.join(', ')}`
              : `${describeUrl(config.databaseUrl)} is up to date (${result.alreadyApplied} migration(s) applied earlier)`,
          );
        },
        { logLevel: 'info' },
      ),
    );
}
