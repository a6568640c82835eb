import type { SandboxState } from './state.js';
import type { BusyState, CallRecord, Confirmation, RejectedConfirm, Reservation } from './types.js';
import type { WebhookEventRecord } from './webhook-dispatcher.js';

/**
 * JSON shapes of the control API, built field by field: an allowlist, so a card code or a token
 * can never reach an inspection answer by being added to a record later. Card numbers (serials)
 * are shown so tests can match issued cards; card codes stay in-process (`sandbox.state`).
 */

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function reservationView(r: Reservation) {
  return {
    transaction_id: r.transactionId,
    transaction_number: r.transactionNumber,
    card_id: r.cardId,
    vendor_id: r.vendorId,
    quantity: r.quantity,
    unit_amount: r.unitAmount,
    status: r.status,
    created_at: iso(r.createdAt),
    expires_at: iso(r.expiresAt),
    settled_at: iso(r.settledAt),
    confirmed_count: r.confirmCount,
  };
}

export function confirmationView(c: Confirmation) {
  return {
    transaction_id: c.transactionId,
    transaction_number: c.transactionNumber,
    payment_id: c.paymentId,
    total_amount_raw: c.totalAmountRaw,
    expected_total: c.expectedTotal,
    amount_matched: c.amountMatched,
    cards_count: c.cards.length,
    card_numbers: c.cards.map((card) => card.cardNumber),
    confirmed_at: iso(c.confirmedAt),
    replay: c.replay,
  };
}

export function rejectedConfirmView(r: RejectedConfirm) {
  return {
    transaction_id: r.transactionId,
    payment_id: r.paymentId,
    total_amount_raw: r.totalAmountRaw,
    reason: r.reason,
    code: r.code,
    at: iso(r.at),
  };
}

export function callView(c: CallRecord) {
  return {
    seq: c.seq,
    at: iso(c.at),
    endpoint: c.endpoint,
    method: c.method,
    path: c.path,
    ip: c.ip,
    http_status: c.httpStatus,
    provider_code: c.providerCode,
    duration_ms: c.durationMs,
    outcome: c.outcome,
    raw_body: c.rawBody,
    authorization: c.authorization,
    token_header_present: c.tokenHeaderPresent,
    transaction_id: c.transactionId ?? null,
  };
}

export function busyView(b: BusyState) {
  return { active: b.active, reason: b.reason ?? null, until: iso(b.until), mode: b.mode, delay_ms: b.delayMs, since: iso(b.since) };
}

export function catalogView(state: SandboxState) {
  return [...state.catalog.vendors.values()].map((v) => ({
    vendor_id: v.vendorId,
    name: v.name,
    name_ar: v.nameAr,
    active: v.active,
    cards: v.cardIds.map((id) => {
      const c = state.catalog.cards.get(id)!;
      return { card_id: c.cardId, name_in_english: c.nameEn, name_in_arabic: c.nameAr, amount: c.amount, stock: c.stock, pending_units: state.pendingUnits(id), active: c.active };
    }),
  }));
}

export function webhookView(e: WebhookEventRecord) {
  return {
    id: e.id,
    type: e.type,
    state: e.state,
    payload: JSON.parse(e.body) as unknown,
    attempts: e.attempts.map((a) => ({
      kind: a.kind,
      at: iso(a.at),
      http_status: a.httpStatus,
      ok: a.ok,
      error: a.error ?? null,
      duration_ms: a.durationMs,
    })),
  };
}
