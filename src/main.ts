#!/usr/bin/env node
import { Command } from 'commander';
import { registerCatalogCommands } from './cli/catalog.js';
import { registerCryptoCommands } from './cli/crypto.js';
import { registerKeyCommands } from './cli/keys.js';
import { registerOrderCommands } from './cli/orders.js';
import { registerSandboxCommand } from './cli/sandbox.js';
import { registerServeCommands } from './cli/serve.js';
import { VERSION } from './version.js';

/** `gateway <command>`: the package's bin. Each command lives in src/cli/. */
export function buildCli(): Command {
  const program = new Command('gateway')
    .description('merchant-side gift-card gateway')
    .version(VERSION)
    .showHelpAfterError()
    .enablePositionalOptions();
  registerServeCommands(program);
  registerSandboxCommand(program);
  registerKeyCommands(program);
  registerCatalogCommands(program);
  registerCryptoCommands(program);
  registerOrderCommands(program);
  return program;
}

await buildCli().parseAsync(process.argv);
