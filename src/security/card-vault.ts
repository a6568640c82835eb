import { randomBytes } from 'node:crypto';
import sodium from 'libsodium-wrappers';
import type { CardCodeKey } from '../config/env.js';
import { CardVaultError } from './card-vault-errors.js';

export { CARD_VAULT_ERROR_CODES, CardVaultError, type CardVaultErrorCode } from './card-vault-errors.js';
export { rotateCardCodes, type RotationFailure, type RotationOptions, type RotationProgress, type RotationResult } from './card-vault-rotation.js';

/**
 * Card codes at rest (architecture invariant 5): XChaCha20-Poly1305-IETF under a key ring whose
 * first key is current. The additional data binds each ciphertext to its order, its position and
 * the id of the key that sealed it, so a ciphertext copied to another row, or relabelled with
 * another key id (even one holding the same bytes), fails to decrypt instead of revealing a code
 * to the wrong order.
 *
 * Additional data, byte for byte (every field fixed-width or length-prefixed, so unambiguous):
 *   "gw.card-code.v1\0"   16 bytes ASCII domain tag (a new layout gets a new tag)
 *   orderId               16 bytes, the UUID's raw bytes (case-insensitive by construction)
 *   position              4 bytes, unsigned big-endian
 *   len(keyId)            1 byte
 *   keyId                 UTF-8, 1-255 bytes
 *
 * Keys live only in this closure: the vault object has no enumerable secret, so logging it
 * cannot leak one. Nonces come from node:crypto (libsodium's randombytes_buf is ~10x slower
 * here); 24 random bytes make a collision negligible for any realistic number of codes.
 */

export const KEY_BYTES = 32;
export const NONCE_BYTES = 24;
const AD_DOMAIN = Buffer.from('gw.card-code.v1\0', 'ascii');
const MAX_POSITION = 2 ** 31 - 1; // PostgreSQL INTEGER
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface CardPlace {
  orderId: string;
  position: number;
}

/** ArrayBuffer-backed bytes, the type Prisma's `Bytes` columns take. */
export type Bytes = Uint8Array<ArrayBuffer>;

export interface SealedCardCode {
  keyId: string;
  nonce: Bytes;
  ciphertext: Bytes;
}

export interface StoredCardCode {
  keyId: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

export interface CardVault {
  /** The id new codes are sealed under (the ring's first key). */
  readonly currentKeyId: string;
  /** Every key id the vault holds, current first. */
  readonly keyIds: readonly string[];
  hasKey(id: string): boolean;
  encrypt(input: CardPlace & { code: string }): SealedCardCode;
  /** Throws CardVaultError `unknown_key` or `decrypt_failed`; never returns a wrong code. */
  decrypt(input: CardPlace & StoredCardCode): string;
}

function checkPlace({ orderId, position }: CardPlace): void {
  if (typeof orderId !== 'string' || !UUID.test(orderId)) throw new CardVaultError('invalid_input', 'orderId must be a UUID');
  if (!Number.isInteger(position) || position < 0 || position > MAX_POSITION) {
    throw new CardVaultError('invalid_input', `position must be a whole number from 0 to ${MAX_POSITION}`);
  }
}

/** The additional data described above; exported for tests and for anyone re-implementing it. */
export function cardCodeAdditionalData(orderId: string, position: number, keyId: string): Uint8Array {
  checkPlace({ orderId, position });
  const id = Buffer.from(keyId, 'utf8');
  if (id.length < 1 || id.length > 255) throw new CardVaultError('invalid_input', 'key id must be 1-255 bytes');
  const ad = Buffer.alloc(AD_DOMAIN.length + 16 + 4 + 1 + id.length);
  let at = AD_DOMAIN.copy(ad, 0);
  at += Buffer.from(orderId.replaceAll('-', ''), 'hex').copy(ad, at);
  at = ad.writeUInt32BE(position, at);
  at = ad.writeUInt8(id.length, at);
  id.copy(ad, at);
  return new Uint8Array(ad.buffer, ad.byteOffset, ad.length);
}

function checkKeys(keys: readonly CardCodeKey[]): Map<string, Uint8Array> {
  if (keys.length === 0) throw new CardVaultError('invalid_keys', 'the card-code key ring is empty (CARD_CODE_KEYS)');
  const ring = new Map<string, Uint8Array>();
  for (const [i, k] of keys.entries()) {
    const idBytes = typeof k.id === 'string' ? Buffer.byteLength(k.id, 'utf8') : 0;
    if (idBytes < 1 || idBytes > 255) throw new CardVaultError('invalid_keys', `card-code key ${i + 1} needs an id of 1-255 bytes`);
    if (ring.has(k.id)) throw new CardVaultError('invalid_keys', `card-code key id "${k.id}" appears twice`);
    // Only the length is reported: the key itself never goes into a message.
    if (!(k.key instanceof Uint8Array) || k.key.length !== KEY_BYTES) {
      throw new CardVaultError('invalid_keys', `card-code key "${k.id}" must be ${KEY_BYTES} bytes`);
    }
    // A private copy: the caller's buffer may be reused or zeroed later.
    ring.set(k.id, Uint8Array.from(k.key));
  }
  return ring;
}

export async function createCardVault(keys: readonly CardCodeKey[]): Promise<CardVault> {
  const ring = checkKeys(keys);
  await sodium.ready;
  const keyIds = Object.freeze([...ring.keys()]);
  const currentKeyId = keyIds[0]!;
  const currentKey = ring.get(currentKeyId)!;
  const decoder = new TextDecoder('utf-8', { fatal: true });

  return Object.freeze({
    currentKeyId,
    keyIds,
    hasKey: (id: string) => ring.has(id),

    encrypt({ orderId, position, code }: CardPlace & { code: string }): SealedCardCode {
      if (typeof code !== 'string') throw new CardVaultError('invalid_input', 'a card code must be a string');
      const ad = cardCodeAdditionalData(orderId, position, currentKeyId);
      const nonce = new Uint8Array(randomBytes(NONCE_BYTES));
      // libsodium's typings predate generic typed arrays; it returns a fresh ArrayBuffer-backed array.
      const ciphertext = sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(code, ad, null, nonce, currentKey) as Bytes;
      return { keyId: currentKeyId, nonce, ciphertext };
    },

    decrypt({ orderId, position, keyId, nonce, ciphertext }: CardPlace & StoredCardCode): string {
      const key = ring.get(keyId);
      if (key === undefined) throw new CardVaultError('unknown_key', `no card-code key with id "${keyId}" in the key ring`);
      const ad = cardCodeAdditionalData(orderId, position, keyId);
      const where = `order ${orderId} position ${position} (key "${keyId}")`;
      if (!(nonce instanceof Uint8Array) || nonce.length !== NONCE_BYTES || !(ciphertext instanceof Uint8Array)) {
        throw new CardVaultError('decrypt_failed', `cannot decrypt the card code of ${where}: malformed nonce or ciphertext`);
      }
      let plain: Uint8Array;
      try {
        plain = sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(null, ciphertext, ad, nonce, key);
      } catch {
        // libsodium's own error is dropped (no cause): nothing about the bytes leaves here.
        throw new CardVaultError('decrypt_failed', `cannot decrypt the card code of ${where}: authentication failed`);
      }
      try {
        return decoder.decode(plain);
      } catch {
        throw new CardVaultError('decrypt_failed', `cannot decrypt the card code of ${where}: not UTF-8`);
      } finally {
        sodium.memzero(plain);
      }
    },
  });
}
