import type { Command } from 'commander';
import { parseScopes, SCOPES } from '../security/scopes.js';
import { API_KEY_CACHE_TTL_MS, createApiKeyService } from '../security/api-keys.js';
import { describeUrl } from '../platform/describe-url.js';
import { createRedis, waitForRedis } from '../platform/redis.js';
import { connectDatabase, prepareDatabase } from '../serve.js';
import { CliError, withContext } from './context.js';
import { out, err } from './output.js';

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('manage API keys for storefronts, support staff and operators');

  keys
    .command('create')
    .description('create a key; the key is printed once, alone on the last line of stdout')
    .requiredOption('--name <name>', 'who or what the key is for, e.g. "storefront-eu"')
    .requiredOption('--scopes <scopes>', `comma-separated: ${SCOPES.join(', ')}`)
    .action((opts: { name: string; scopes: string }) =>
      withContext(async ({ config, log }) => {
        const name = opts.name.trim();
        if (name.length === 0 || name.length > 100) throw new CliError('--name must be 1-100 characters');
        const { scopes, unknown } = parseScopes(opts.scopes);
        if (unknown.length > 0) throw new CliError(`unknown scope(s): ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
        if (scopes.length === 0) throw new CliError('--scopes must name at least one scope');
        await prepareDatabase(config, log);
        const prisma = await connectDatabase(config, 'gateway:cli');
        try {
          const { key, summary } = await createApiKeyService({ prisma, log }).create(name, scopes);
          err(`created key ${summary.id} "${summary.name}" (prefix ${summary.prefix}) with scopes ${summary.scopes.join(',')}`);
          err('store it now: it cannot be shown again');
          out(key);
        } finally {
          await prisma.$disconnect();
        }
      }),
    );

  keys
    .command('list')
    .description('list keys (never their secrets)')
    .option('--json', 'one JSON object per line')
    .action((opts: { json?: boolean }) =>
      withContext(async ({ config, log }) => {
        await prepareDatabase(config, log);
        const prisma = await connectDatabase(config, 'gateway:cli');
        try {
          const rows = await createApiKeyService({ prisma, log }).list();
          if (opts.json) {
            for (const r of rows) out(JSON.stringify(r));
            return;
          }
          out(['ID', 'PREFIX', 'NAME', 'SCOPES', 'CREATED', 'LAST USED', 'STATUS'].join('\t'));
          for (const r of rows) {
            out(
              [r.id, r.prefix, r.name, r.scopes.join(','), r.createdAt.toISOString(), r.lastUsedAt?.toISOString() ?? '-', r.revokedAt ? `revoked ${r.revokedAt.toISOString()}` : 'active'].join('\t'),
            );
          }
        } finally {
          await prisma.$disconnect();
        }
      }),
    );

  keys
    .command('revoke')
    .description('revoke a key by id or prefix; running gateways stop accepting it at once')
    .argument('<id>', 'key id (uuid) or prefix')
    .action((id: string) =>
      withContext(async ({ config, log }) => {
        await prepareDatabase(config, log);
        const prisma = await connectDatabase(config, 'gateway:cli');
        // The producer connection fails fast: publishing before it is ready would just fail.
        const redis = createRedis(config.redisUrl, 'producer');
        try {
          const ready = await waitForRedis(redis, 3_000).then(
            () => true,
            () => false,
          );
          const service = createApiKeyService({ prisma, log, channel: `${config.queuePrefix}:api-keys:revoked`, ...(ready ? { redis } : {}) });
          const revoked = await service.revoke(id.trim());
          if (!revoked) throw new CliError(`no key with id or prefix ${JSON.stringify(id)}`);
          const { summary, notified } = revoked;
          out(`revoked ${summary.id} "${summary.name}" (prefix ${summary.prefix}) at ${summary.revokedAt?.toISOString() ?? ''}`);
          if (notified === undefined) {
            err(
              `warning: could not announce the revocation on Redis at ${describeUrl(config.redisUrl)} (REDIS_URL); ` +
                `running gateways may accept the key for up to ${API_KEY_CACHE_TTL_MS / 1000} s more`,
            );
          } else {
            err(`announced to ${notified} running gateway instance(s)`);
          }
        } finally {
          redis.disconnect();
          await prisma.$disconnect();
        }
      }),
    );
}
