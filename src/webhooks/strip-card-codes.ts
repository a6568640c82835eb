/**
 * Card codes come from the provider API only, never from a webhook: the documented payloads carry
 * none, and anything that looks like one is removed before a payload is stored or shown, so a
 * provider change (or a forged field) can never put a code in the inbox, the logs or a support
 * answer. Serial numbers are not secret and stay.
 */

/** Field names that hold a code wherever they appear (compared lower-case, without _ and -). */
const CODE_FIELDS = new Set(['cardcode', 'cardcodes', 'giftcode', 'giftcardcode', 'vouchercode', 'redemptioncode', 'cardpin', 'pincode', 'pin', 'secretcode', 'claimcode']);
/** Inside a card list, plain `code`/`codes` are codes too. */
const CODE_FIELDS_IN_CARDS = new Set(['code', 'codes']);
const CARD_LISTS = new Set(['cards', 'card', 'cardlist', 'carddetails', 'giftcards', 'vouchers']);

export const STRIPPED = '[removed]';

function norm(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, '');
}

export interface StripResult<T> {
  value: T;
  /** How many fields or entries were removed (0: the payload was clean). */
  removed: number;
}

export function stripCardCodes<T>(input: T): StripResult<T> {
  let removed = 0;
  const walk = (value: unknown, inCards: boolean): unknown => {
    if (Array.isArray(value)) {
      return value.map((item) => {
        // A bare string in a card list can only be a code.
        if (inCards && typeof item === 'string') {
          removed++;
          return STRIPPED;
        }
        return walk(item, inCards);
      });
    }
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const k = norm(key);
      if (CODE_FIELDS.has(k) || (inCards && CODE_FIELDS_IN_CARDS.has(k))) {
        removed++;
        continue;
      }
      // defineProperty: a JSON key named __proto__ stays a plain field instead of a prototype.
      Object.defineProperty(out, key, { value: walk(child, inCards || CARD_LISTS.has(k)), enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  const value = walk(input, false) as T;
  return { value, removed };
}
