import { setTimeout as sleep } from 'node:timers/promises';
import type { Denomination } from './catalog.js';
import type { SandboxEvents } from './events.js';
import { confirmOrder, expireDueReservations, findActiveCard, reserveCards } from './orders.js';
import { ProviderError, successEnvelope } from './provider-codes.js';
import { echoCardId, readId } from './request-fields.js';
import type { SandboxState } from './state.js';
import type { Reservation } from './types.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';

/**
 * The provider's operations, one per endpoint, returning the success body or throwing
 * ProviderError. Commits happen here and are announced here (in-process event, then webhooks),
 * before the route decides whether the caller gets to hear the answer.
 */

export interface ProviderDeps {
  state: SandboxState;
  events: SandboxEvents;
  webhooks: WebhookDispatcher;
  now: () => number;
  credentials: { username: string; privateKey: string };
  /** Aborted when the sandbox closes, so no delay outlives it. */
  signal: AbortSignal;
}

export interface ProviderRequest {
  body: Record<string, unknown>;
  /** Raw literal of total_amount as sent (confirm only). */
  rawTotalAmount?: string;
}

export type OperationResult = { body: Record<string, unknown>; transactionId?: string };

export class ProviderService {
  constructor(private readonly deps: ProviderDeps) {}

  login({ body }: ProviderRequest): OperationResult {
    const { state, now, credentials } = this.deps;
    if (body.user_name === undefined || body.user_name === null || body.user_name === '') throw new ProviderError(10007);
    if (body.password === undefined || body.password === null || body.password === '') throw new ProviderError(10008);
    // Wrong credentials have no code in the spec. 10000 ("Incorrect Token Access") is the nearest
    // meaning; a client must not answer it by logging in again in a loop.
    if (body.user_name !== credentials.username || body.password !== credentials.privateKey) throw new ProviderError(10000, 'invalid credentials');
    const token = state.tokens.issue(now(), state.behaviour.tokenTtlMs, state.behaviour.loginRevokesPreviousTokens);
    return { body: successEnvelope({ token }) };
  }

  cardList(): OperationResult {
    const vendors = [...this.deps.state.catalog.vendors.values()]
      .filter((v) => v.active)
      .map((v) => ({ vendor_id: v.vendorId, name: v.name, name_ar: v.nameAr }));
    return { body: successEnvelope({ data: vendors }) };
  }

  cardDetails({ body }: ProviderRequest): OperationResult {
    const { catalog } = this.deps.state;
    const id = readId(body, 'vendor_id');
    // The spec lists 10005 ("Card ID Missing") for this endpoint: it is what a missing vendor_id gets.
    if (id.kind === 'missing') throw new ProviderError(10005, 'vendor_id missing');
    const vendor = id.kind === 'value' ? catalog.vendors.get(id.id) : undefined;
    if (!vendor || !vendor.active) throw new ProviderError(10002);
    const data = vendor.cardIds
      .map((cardId) => catalog.cards.get(cardId))
      .filter((c): c is Denomination => c !== undefined && c.active)
      .map((c) => ({ card_id: c.cardId, name_in_english: c.nameEn, name_in_arabic: c.nameAr, amount: c.amount, balance: c.stock }));
    return { body: successEnvelope({ data }) };
  }

  balance({ body }: ProviderRequest): OperationResult {
    const card = findActiveCard(this.deps.state, body);
    return { body: successEnvelope({ data: [{ card_id: echoCardId(card.cardId), balance: card.stock }] }) };
  }

  async initiate({ body }: ProviderRequest): Promise<OperationResult> {
    const { state, now, signal } = this.deps;
    if (state.busy.active) {
      // Busy mode's effect is not shown; refusing with the generic retryable 10001 is the default.
      if (state.busy.mode === 'reject') throw new ProviderError(10001, 'service busy');
      await sleep(state.busy.delayMs, undefined, { signal, ref: false });
      this.sweep();
    }
    const { reservation, created } = reserveCards(state, body, now());
    if (created) this.announceReservation(reservation);
    return { body: successEnvelope({ transaction_id: reservation.transactionId }), transactionId: reservation.transactionId };
  }

  confirm({ body, rawTotalAmount }: ProviderRequest): OperationResult {
    const { state, now, events, webhooks } = this.deps;
    const { confirmation, reservation } = confirmOrder(state, body, rawTotalAmount, now());
    if (!confirmation.replay) {
      events.emit('confirmation.committed', confirmation);
      webhooks.publish('order.status_updated', orderStatus(reservation, 'confirmed'));
      webhooks.publish('order.finalized', { ...orderRef(reservation), status: 'completed', cards_count: confirmation.cards.length });
    }
    const data = confirmation.cards.map((c) => ({ card_code: c.cardCode, card_number: c.cardNumber }));
    return { body: successEnvelope({ data }), transactionId: reservation.transactionId };
  }

  /**
   * Applies time-based transitions (reservation expiry, end of busy mode) and announces them.
   * Run before every operation and by a timer, so a fake clock and an idle sandbox both work.
   */
  sweep(): void {
    const ended = expireDueReservations(this.deps.state, this.deps.now());
    if (ended.length > 0) this.announceEnded(ended);
    this.endBusyIfDue();
  }

  /** Announces reservations that ended without confirmation (expiry sweep, control API). */
  announceEnded(reservations: Reservation[]): void {
    for (const r of reservations) {
      this.deps.events.emit('reservation.ended', r);
      this.deps.webhooks.publish('order.status_updated', orderStatus(r, r.status));
      // An expired reservation is final too; the webhook format has only completed/cancelled.
      this.deps.webhooks.publish('order.finalized', { ...orderRef(r), status: 'cancelled', cards_count: 0 });
    }
  }

  setBusy(active: boolean, opts: { reason?: string; until?: number; mode?: 'reject' | 'delay'; delayMs?: number } = {}): void {
    const { state, now, events, webhooks } = this.deps;
    const was = state.busy.active;
    state.busy = active
      ? { active: true, reason: opts.reason, until: opts.until, mode: opts.mode ?? 'reject', delayMs: opts.delayMs ?? 0, since: now() }
      : { active: false, mode: 'reject', delayMs: 0 };
    events.emit('busy.changed', state.busy);
    if (active) {
      const data: Record<string, unknown> = {};
      if (opts.reason !== undefined) data.reason = opts.reason;
      if (opts.until !== undefined) data.until = new Date(opts.until).toISOString();
      webhooks.publish('busy_mode.activated', data);
    } else if (was) {
      webhooks.publish('busy_mode.revoked', {});
    }
  }

  /** Busy mode with an `until` ends by itself; checked on each initiation and by the sweep timer. */
  endBusyIfDue(): void {
    const { busy } = this.deps.state;
    if (busy.active && busy.until !== undefined && busy.until <= this.deps.now()) this.setBusy(false);
  }

  private announceReservation(reservation: Reservation): void {
    const { events, webhooks } = this.deps;
    events.emit('reservation.committed', reservation);
    webhooks.publish('order.created', { ...orderRef(reservation), card_id: echoCardId(reservation.cardId), quantity: reservation.quantity });
    webhooks.publish('order.status_updated', orderStatus(reservation, 'pending'));
  }
}

function orderRef(r: Reservation): { transaction_id: string; transaction_number: number } {
  return { transaction_id: r.transactionId, transaction_number: r.transactionNumber };
}

function orderStatus(r: Reservation, status: string): Record<string, unknown> {
  return { ...orderRef(r), status };
}
