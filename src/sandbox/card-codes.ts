import { randomInt } from 'node:crypto';

/**
 * Plausible card codes and serial numbers. Codes come from crypto randomness so tests cannot
 * accidentally depend on them being predictable; uniqueness is enforced by the caller's set.
 */

// No 0/O or 1/I: real redemption codes avoid characters customers confuse.
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export type RandomInt = (maxExclusive: number) => number;

export function codeFromPattern(pattern: string, rnd: RandomInt = randomInt): string {
  let out = '';
  for (const c of pattern) {
    if (c === 'X') out += CODE_ALPHABET[rnd(CODE_ALPHABET.length)];
    else if (c === '9') out += String(rnd(10));
    else out += c;
  }
  return out;
}

/** Serial numbers: a fixed prefix, the card id's digits (or 0), a running sequence. */
export function serialNumber(cardId: string, sequence: number): string {
  const cardPart = (cardId.replace(/\D/g, '') || '0').padStart(4, '0').slice(-4);
  return `SN${cardPart}${String(sequence).padStart(10, '0')}`;
}
