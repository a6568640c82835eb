import { randomUUID } from 'node:crypto';
import { codeFromPattern, serialNumber } from './card-codes.js';
import { amountMatches, expectedTotal, isJsonNumberLiteral } from './money.js';
import { ProviderError } from './provider-codes.js';
import { readId, readNonEmptyString, readNonNegativeInteger, readPositiveInteger } from './request-fields.js';
import type { SandboxState } from './state.js';
import type { Confirmation, IssuedCard, RejectedConfirm, Reservation } from './types.js';

/**
 * The provider's order rules (upstream-api.md sections 3, 4.5, 4.6) as synchronous functions over
 * SandboxState. Synchronous on purpose: the stock check and the decrement happen with no await in
 * between, so concurrent initiations can never oversell.
 */

export interface InitiateResult {
  reservation: Reservation;
  /** False when an existing reservation was returned (repeatedTransactionNumber=return-existing). */
  created: boolean;
}

/** Callers apply due expiries first (ProviderService.sweep) so stock and announcements agree. */
export function reserveCards(state: SandboxState, body: Record<string, unknown>, now: number): InitiateResult {
  const card = findActiveCard(state, body);
  const quantity = readQuantity(state, body);
  const transactionNumber = readNonNegativeInteger(body.transaction_number);
  if (transactionNumber === undefined) throw new ProviderError(10001, 'transaction_number missing or not an integer');

  if (state.behaviour.repeatedTransactionNumber === 'return-existing') {
    const existing = [...state.reservations.values()].find(
      (r) => r.transactionNumber === transactionNumber && (r.status === 'pending' || r.status === 'confirmed'),
    );
    if (existing) return { reservation: existing, created: false };
  }
  // By default a repeated transaction_number is a second, separate reservation: the spec does not
  // say the provider de-duplicates, so the gateway must never rely on it.
  if (quantity > card.stock) throw new ProviderError(10006);

  card.stock -= quantity;
  const reservation: Reservation = {
    transactionId: `TXN-${randomUUID()}`,
    transactionNumber,
    cardId: card.cardId,
    vendorId: card.vendorId,
    quantity,
    unitAmount: card.amount,
    status: 'pending',
    createdAt: now,
    expiresAt: now + state.behaviour.reservationTtlMs,
    confirmCount: 0,
  };
  state.reservations.set(reservation.transactionId, reservation);
  return { reservation, created: true };
}

export function findActiveCard(state: SandboxState, body: Record<string, unknown>) {
  const id = readId(body, 'card_id');
  if (id.kind === 'missing') throw new ProviderError(10005);
  const card = id.kind === 'value' ? state.catalog.cards.get(id.id) : undefined;
  if (!card || !card.active) throw new ProviderError(10002);
  return card;
}

function readQuantity(state: SandboxState, body: Record<string, unknown>): number {
  if (body.quantiry === undefined) {
    if (body.quantity !== undefined && state.behaviour.misspelledQuantity === 'ignore') return 1;
    // The spec: "the spelling `quantity` is not accepted and the request fails or the field is
    // ignored". Failing is the default because silently reserving one unit would hide the bug.
    throw new ProviderError(10001, body.quantity !== undefined ? 'quantiry missing (quantity is not accepted)' : 'quantiry missing');
  }
  const quantity = readPositiveInteger(body.quantiry);
  if (quantity === undefined) throw new ProviderError(10001, 'quantiry must be a positive integer');
  return quantity;
}

export interface ConfirmResult {
  confirmation: Confirmation;
  reservation: Reservation;
}

export function confirmOrder(state: SandboxState, body: Record<string, unknown>, rawTotal: string | undefined, now: number): ConfirmResult {
  const transactionId = readNonEmptyString(body.transaction_id);
  const paymentId = readNonEmptyString(body.payment_id);
  const reject = (reason: RejectedConfirm['reason'], code: 10001 | 10002, detail: string): never => {
    state.rejectedConfirms.push({
      transactionId: typeof body.transaction_id === 'string' ? body.transaction_id : JSON.stringify(body.transaction_id ?? null),
      paymentId: paymentId ?? null,
      totalAmountRaw: rawTotal ?? null,
      reason,
      code,
      at: now,
    });
    throw new ProviderError(code, detail);
  };

  if (!transactionId) return reject('missing_fields', 10001, 'transaction_id missing');
  const reservation = state.reservations.get(transactionId);
  const invalidCode = state.behaviour.invalidTransactionCode;
  if (!reservation) return reject('invalid_transaction', invalidCode, 'transaction not found');
  if (reservation.status === 'confirmed' && state.behaviour.reconfirm === 'same-cards') {
    return replayConfirmation(state, reservation, paymentId, rawTotal, now);
  }
  // Rule 1 of section 3: only a pending transaction from a prior initiation can be confirmed.
  if (reservation.status !== 'pending') return reject('invalid_transaction', invalidCode, `transaction is ${reservation.status}`);
  if (!paymentId) return reject('missing_fields', 10001, 'payment_id missing');
  if (rawTotal === undefined) return reject('missing_fields', 10001, 'total_amount missing');
  if (!isJsonNumberLiteral(rawTotal)) return reject('invalid_amount', 10001, 'total_amount must be a number');

  const expected = expectedTotal(reservation.unitAmount, reservation.quantity);
  const matched = amountMatches(rawTotal, expected);
  if (!matched && state.behaviour.amountMismatch === 'reject') return reject('amount_mismatch', 10001, 'total_amount does not match');

  const cards = issueCards(state, reservation);
  reservation.status = 'confirmed';
  reservation.settledAt = now;
  reservation.confirmCount += 1;
  const confirmation: Confirmation = {
    transactionId,
    transactionNumber: reservation.transactionNumber,
    paymentId,
    totalAmountRaw: rawTotal,
    expectedTotal: expected,
    amountMatched: matched,
    cards,
    confirmedAt: now,
    replay: false,
  };
  state.confirmations.push(confirmation);
  return { confirmation, reservation };
}

function replayConfirmation(state: SandboxState, reservation: Reservation, paymentId: string | undefined, rawTotal: string | undefined, now: number): ConfirmResult {
  const first = state.confirmations.find((c) => c.transactionId === reservation.transactionId && !c.replay);
  if (!first) throw new ProviderError(10001, 'confirmation record missing');
  reservation.confirmCount += 1;
  const confirmation: Confirmation = { ...first, paymentId: paymentId ?? first.paymentId, totalAmountRaw: rawTotal ?? '', confirmedAt: now, replay: true };
  state.confirmations.push(confirmation);
  return { confirmation, reservation };
}

function issueCards(state: SandboxState, reservation: Reservation): IssuedCard[] {
  const card = state.catalog.cards.get(reservation.cardId);
  const pattern = card?.codePattern ?? 'XXXX-XXXX-XXXX-XXXX';
  const cards: IssuedCard[] = [];
  for (let i = 0; i < reservation.quantity; i++) {
    let code = codeFromPattern(pattern);
    while (state.issuedCodes.has(code)) code = codeFromPattern(pattern);
    state.issuedCodes.add(code);
    state.serialSequence += 1;
    cards.push({ cardCode: code, cardNumber: serialNumber(reservation.cardId, state.serialSequence) });
  }
  return cards;
}

/** Ends pending reservations whose time is up and returns their stock. Returns those that ended. */
export function expireDueReservations(state: SandboxState, now: number): Reservation[] {
  const ended: Reservation[] = [];
  for (const r of state.reservations.values()) {
    if (r.status === 'pending' && r.expiresAt <= now) {
      settleUnconfirmed(state, r, 'expired', now);
      ended.push(r);
    }
  }
  return ended;
}

/** Ends one pending reservation early (control API: provider-side cancellation or expiry). */
export function endReservation(state: SandboxState, transactionId: string, status: 'expired' | 'cancelled', now: number): Reservation | undefined {
  const r = state.reservations.get(transactionId);
  if (!r || r.status !== 'pending') return undefined;
  settleUnconfirmed(state, r, status, now);
  return r;
}

function settleUnconfirmed(state: SandboxState, r: Reservation, status: 'expired' | 'cancelled', now: number): void {
  r.status = status;
  r.settledAt = now;
  const card = state.catalog.cards.get(r.cardId);
  if (card) card.stock += r.quantity;
}
