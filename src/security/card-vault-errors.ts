/**
 * The vault's one error type. `code` is stable (callers branch on it); messages name only
 * non-secret things (key ids, orders, positions) and never a card code, key or ciphertext.
 */
export const CARD_VAULT_ERROR_CODES = [
  /** The key ring given to the vault is unusable (empty, duplicate ids, wrong key length). */
  'invalid_keys',
  /** Input the vault refuses before touching any key (e.g. a position out of range). */
  'invalid_input',
  /** The row names a key id this process does not hold. */
  'unknown_key',
  /** Authentication failed: wrong key, tampered bytes, or a ciphertext moved to another order/position/key id. */
  'decrypt_failed',
] as const;

export type CardVaultErrorCode = (typeof CARD_VAULT_ERROR_CODES)[number];

export class CardVaultError extends Error {
  constructor(
    readonly code: CardVaultErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CardVaultError';
  }
}
