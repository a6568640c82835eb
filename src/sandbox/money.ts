import { Decimal } from 'decimal.js';

/**
 * Money arithmetic of the sandbox. Prices are decimal strings in the catalog and total_amount is
 * a JSON float on the wire; both are compared as decimals built from their TEXT, never through a
 * binary double, so `0.30000000000000004` is not mistaken for `0.3`.
 */

/** Unit price × quantity, as a plain decimal string (no exponent, no trailing zeros kept). */
export function expectedTotal(unitAmount: string, quantity: number): string {
  return new Decimal(unitAmount).times(quantity).toFixed();
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** Whether a raw JSON literal is a number (a quoted "12.5" is not: the spec says float). */
export function isJsonNumberLiteral(raw: string): boolean {
  return JSON_NUMBER.test(raw);
}

/** Exact comparison of a raw JSON number literal with a decimal string. */
export function amountMatches(rawLiteral: string, expected: string): boolean {
  if (!isJsonNumberLiteral(rawLiteral)) return false;
  return new Decimal(rawLiteral).equals(new Decimal(expected));
}
