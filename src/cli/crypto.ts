import type { Command } from 'commander';
import { createCardVault, rotateCardCodes, type RotationProgress } from '../security/card-vault.js';
import { loadCardCodeKeys } from '../security/card-code-keys.js';
import { connectDatabase, prepareDatabase } from '../serve.js';
import { CliError, withContext } from './context.js';
import { err, out } from './output.js';

/*
 * Rotating the card-code key (codes are encrypted at rest under CARD_CODE_KEYS, first = current):
 *   1. Generate a key (`openssl rand -base64 32`) and put it FIRST in CARD_CODE_KEYS, keeping
 *      every old key after it: `CARD_CODE_KEYS=k2:<new>,k1:<old>`.
 *   2. Restart/deploy every gateway instance, so new codes are sealed under k2 and old ones still
 *      decrypt under k1.
 *   3. Run `gateway crypto rotate` (with the same CARD_CODE_KEYS): it re-encrypts every stored
 *      code under k2. Exit 0 when every row is now under k2; exit 1 lists rows it could not
 *      rotate (a key missing from the ring, or a row that does not authenticate) — fix those
 *      first. It is safe to re-run, and to run on two machines at once.
 *   4. Only then remove k1 from CARD_CODE_KEYS and restart again. Removing it earlier makes the
 *      codes still under k1 unreadable.
 */

function progressLine(p: RotationProgress): string {
  return `batch ${p.batch}: ${p.seen} row(s) examined, ${p.rotated} rotated, ${p.failed} failed`;
}

export function registerCryptoCommands(program: Command): void {
  const crypto = program.command('crypto').description('card-code encryption keys');

  crypto
    .command('rotate')
    .description('re-encrypt every stored card code under the current (first) key of CARD_CODE_KEYS; exit 0 when none failed, 1 otherwise')
    .option('--batch-size <n>', 'rows per transaction', '200')
    .action((opts: { batchSize: string }) =>
      withContext(async ({ config, log }) => {
        const batchSize = /^\d+$/.test(opts.batchSize) ? Number(opts.batchSize) : Number.NaN;
        if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) throw new CliError('--batch-size must be a whole number from 1 to 10000');
        const keys = await loadCardCodeKeys(config.cardCodeKeys, config.cardCodeKeyFile, log);
        const vault = await createCardVault(keys);
        await prepareDatabase(config, log);
        const prisma = await connectDatabase(config, 'gateway:cli');
        try {
          err(`rotating card codes to key "${vault.currentKeyId}" (key ring: ${vault.keyIds.join(', ')})`);
          const result = await rotateCardCodes({ prisma, vault, batchSize, onProgress: (p) => err(progressLine(p)) });
          out(`rotation to key "${result.keyId}": ${result.rotated} rotated, ${result.alreadyCurrent} already current, ${result.failed.length} failed`);
          for (const f of result.failed) out(`  failed ${f.orderId} position ${f.position} (key "${f.keyId}"): ${f.code}`);
          if (result.failed.length > 0) {
            err('some codes were not rotated: keep their keys in CARD_CODE_KEYS (or restore the missing ones) and run again');
          }
          process.exitCode = result.failed.length === 0 ? 0 : 1;
        } finally {
          await prisma.$disconnect();
        }
      }),
    );
}
