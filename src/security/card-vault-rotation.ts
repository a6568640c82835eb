import { Prisma, type PrismaClient } from '../platform/db.js';
import type { CardVault, SealedCardCode } from './card-vault.js';
import { CardVaultError, type CardVaultErrorCode } from './card-vault-errors.js';

/**
 * Re-encrypts every stored card code that is not under the vault's current key.
 *
 * Rows are walked in primary-key order with a keyset cursor, one batch per transaction, each
 * batch locked with `FOR UPDATE SKIP LOCKED`: two rotations running at once split the rows
 * between them instead of waiting or processing a row twice. Each write is also a
 * compare-and-set on the old key id, so a row changed under us since it was read is left alone
 * rather than overwritten. The cursor means a row that cannot be rotated (its key is not in the
 * ring, or it does not authenticate) is reported once and not retried forever.
 *
 * Plaintext codes exist only in memory between decrypt and encrypt; nothing here logs them.
 */

export interface RotationFailure {
  orderId: string;
  position: number;
  /** The key id the row is stored under (an id, never key material). */
  keyId: string;
  /** `unknown_key` or `decrypt_failed` (`invalid_input` only for a row our own code could not have written). */
  code: CardVaultErrorCode;
}

export interface RotationResult {
  /** The key every rotated row is now under. */
  keyId: string;
  /** Rows this run re-encrypted. */
  rotated: number;
  /** Rows already under the current key when the run started. */
  alreadyCurrent: number;
  failed: RotationFailure[];
}

export interface RotationProgress {
  batch: number;
  /** Rows examined so far (cumulative), and how they ended. */
  seen: number;
  rotated: number;
  failed: number;
}

export interface RotationOptions {
  prisma: PrismaClient;
  vault: CardVault;
  batchSize?: number;
  onProgress?: (p: RotationProgress) => void;
}

interface Row {
  order_id: string;
  position: number;
  key_id: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

export async function rotateCardCodes({ prisma, vault, batchSize = 200, onProgress }: RotationOptions): Promise<RotationResult> {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) throw new RangeError('batchSize must be a whole number from 1 to 10000');
  const current = vault.currentKeyId;
  const alreadyCurrent = await prisma.orderCard.count({ where: { keyId: current } });
  const failed: RotationFailure[] = [];
  let rotated = 0;
  let seen = 0;
  let batch = 0;
  let cursor: { orderId: string; position: number } | undefined;

  for (;;) {
    const outcome = await prisma.$transaction(
      async (tx) => {
        const after = cursor ? Prisma.sql`AND (order_id, position) > (${cursor.orderId}::uuid, ${cursor.position})` : Prisma.empty;
        const rows = await tx.$queryRaw<Row[]>`
          SELECT order_id::text AS order_id, position, key_id, nonce, ciphertext
          FROM order_cards
          WHERE key_id <> ${current} ${after}
          ORDER BY order_id, position
          LIMIT ${batchSize}
          FOR UPDATE SKIP LOCKED`;
        let done = 0;
        const batchFailed: RotationFailure[] = [];
        for (const row of rows) {
          const place = { orderId: row.order_id, position: row.position };
          let sealed: SealedCardCode;
          try {
            const code = vault.decrypt({ ...place, keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext });
            sealed = vault.encrypt({ ...place, code });
          } catch (e) {
            if (e instanceof CardVaultError) {
              batchFailed.push({ ...place, keyId: row.key_id, code: e.code });
              continue;
            }
            throw e;
          }
          const { count } = await tx.orderCard.updateMany({
            where: { orderId: row.order_id, position: row.position, keyId: row.key_id },
            data: { keyId: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext },
          });
          done += count;
        }
        const last = rows.at(-1);
        return { examined: rows.length, done, batchFailed, last: last && { orderId: last.order_id, position: last.position } };
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    if (outcome.examined === 0) break;
    batch += 1;
    seen += outcome.examined;
    rotated += outcome.done;
    failed.push(...outcome.batchFailed);
    cursor = outcome.last;
    onProgress?.({ batch, seen, rotated, failed: failed.length });
    if (outcome.examined < batchSize) break;
  }
  return { keyId: current, rotated, alreadyCurrent, failed };
}
