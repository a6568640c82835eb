import { Decimal } from 'decimal.js';

/**
 * Money is decimal, never binary floating point: 0.10 × 3 is exactly 0.3. Prices arrive as
 * decimal strings ("9.99", "15", "0.10") and totals are computed here and nowhere else.
 */
const DECIMAL_TEXT = /^(0|[1-9]\d*)(\.\d+)?$/;

export function isDecimalText(value: string): boolean {
  return DECIMAL_TEXT.test(value);
}

function decimalPlaces(text: string): number {
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}

/** unit price × quantity, exact, written with the unit price's number of decimals ("0.10" × 3 → "0.30"). */
export function orderTotal(unitPrice: string, quantity: number): string {
  if (!isDecimalText(unitPrice)) throw new RangeError('unit price must be a non-negative decimal string');
  if (!Number.isSafeInteger(quantity) || quantity < 1) throw new RangeError('quantity must be a positive integer');
  return new Decimal(unitPrice).times(quantity).toFixed(decimalPlaces(unitPrice));
}

/** True when two decimal strings denote the same amount ("15" and "15.00"). */
export function sameAmount(a: string, b: string): boolean {
  return new Decimal(a).equals(new Decimal(b));
}
