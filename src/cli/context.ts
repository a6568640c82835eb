import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { createLogger, type Logger } from '../platform/logger.js';
import { StartupError } from '../serve.js';
import { err } from './output.js';

/** A problem the user can fix; printed as one line without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const EXIT_CONFIG = 78; // EX_CONFIG from sysexits.h

export interface CliContext {
  config: Config;
  log: Logger;
}

/**
 * Loads the configuration (one line per problem, exit 78) and a logger on stderr, so stdout
 * stays for results. Known failures print one line and set the exit code; unknown ones print
 * the error and exit 1.
 */
export async function withContext(run: (ctx: CliContext) => Promise<void>, opts: { logLevel?: string } = {}): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      err('gateway: invalid configuration');
      for (const problem of e.problems) err(`  ${problem}`);
      process.exitCode = EXIT_CONFIG;
      return;
    }
    throw e;
  }
  const log = createLogger(opts.logLevel ?? (config.logLevel === 'info' ? 'warn' : config.logLevel), process.stderr);
  try {
    await run({ config, log });
  } catch (e) {
    if (e instanceof CliError || e instanceof StartupError) {
      err(`gateway: ${e.message}`);
      process.exitCode = e instanceof CliError ? e.exitCode : 1;
      return;
    }
    throw e;
  }
}
