/**
 * Shared types of the provider sandbox. The sandbox simulates the provider described in
 * /work/shared/upstream-api.md; names follow that document (`transaction_id`, `quantiry`…) where
 * they cross the wire, and the domain's words in code.
 */

/** The provider's endpoints, named by their last path segment. */
export const ENDPOINTS = [
  'login',
  'get-card-list',
  'get-card-details-list',
  'get-balance-details',
  'initiate-card-request',
  'confirm-order',
] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

export function isEndpoint(value: string): value is Endpoint {
  return (ENDPOINTS as readonly string[]).includes(value);
}

/** Endpoints whose success commits something (stock reserved, payment taken). */
export const COMMITTING_ENDPOINTS = ['initiate-card-request', 'confirm-order'] as const;
export type CommittingEndpoint = (typeof COMMITTING_ENDPOINTS)[number];

/**
 * What happens to the answer of a call whose work has been committed:
 * - `drop`: destroy the socket, the caller gets a connection error;
 * - `hang`: never answer (the socket is destroyed when the sandbox closes);
 * - `delay`: answer normally after `delayMs`;
 * - `error`: answer 10001 although the work was done (the worst lie a provider can tell).
 */
export type AfterCommitAction = 'drop' | 'hang' | 'delay' | 'error';

export interface AfterCommitFault {
  action: AfterCommitAction;
  /** For `delay`. */
  delayMs?: number;
  /** How many calls to affect; omitted = every call until cleared. */
  times?: number;
}

export interface FaultSettings {
  /** Added to every provider call before it is processed, unless the endpoint has its own value. */
  latencyMs: number;
  endpointLatencyMs: Partial<Record<Endpoint, number>>;
  /** Probability (0..1) that a call fails with 10001 before doing any work. */
  errorRate: Partial<Record<Endpoint, number>>;
  /** Deterministic variant: the next N calls of the endpoint fail with 10001 before doing any work. */
  failNext: Partial<Record<Endpoint, number>>;
  /** Faults applied after the work of a committing endpoint is done. */
  afterCommit: Partial<Record<CommittingEndpoint, AfterCommitFault>>;
}

/** Provider behaviours the spec leaves open; each default is the worst case for a client. */
export interface BehaviourSettings {
  /** HTTP status of error envelopes: always 200, or mapped per code (see provider-codes.ts). */
  errorHttpStatus: 200 | 'mapped';
  /** total_amount different from unit price × quantity: reject with 10001, or accept and record. */
  amountMismatch: 'reject' | 'accept';
  /** Code answered to a confirm whose transaction_id is unknown, expired or already confirmed. */
  invalidTransactionCode: 10001 | 10002;
  /** A second confirm of a confirmed transaction: fail, or answer the same cards again. */
  reconfirm: 'fail' | 'same-cards';
  /** A body with `quantity` but no `quantiry`: reject with 10001, or ignore it and reserve one unit. */
  misspelledQuantity: 'reject' | 'ignore';
  /** A second initiate with the same transaction_number: a new reservation, or the first one back. */
  repeatedTransactionNumber: 'new-reservation' | 'return-existing';
  /** Whether a login revokes every token issued before. */
  loginRevokesPreviousTokens: boolean;
  /** Session token lifetime. */
  tokenTtlMs: number;
  /** How long a pending reservation holds its stock. */
  reservationTtlMs: number;
}

export interface BusyState {
  active: boolean;
  reason?: string;
  /** Epoch ms; busy mode ends by itself then. */
  until?: number;
  /** `reject`: initiations fail with 10001; `delay`: they are answered after `delayMs`. */
  mode: 'reject' | 'delay';
  delayMs: number;
  since?: number;
}

export type ReservationStatus = 'pending' | 'confirmed' | 'expired' | 'cancelled';

export interface Reservation {
  transactionId: string;
  transactionNumber: number;
  cardId: string;
  vendorId: string;
  quantity: number;
  /** Unit price as the catalog held it at initiation (decimal string). */
  unitAmount: string;
  status: ReservationStatus;
  createdAt: number;
  expiresAt: number;
  /** When the status left `pending`. */
  settledAt?: number;
  /** Successful confirm answers given for this transaction (more than 1 only with reconfirm=same-cards). */
  confirmCount: number;
}

export interface IssuedCard {
  cardCode: string;
  cardNumber: string;
}

export interface Confirmation {
  transactionId: string;
  transactionNumber: number;
  paymentId: string;
  /** total_amount exactly as its JSON literal appeared in the request body. */
  totalAmountRaw: string;
  expectedTotal: string;
  amountMatched: boolean;
  cards: IssuedCard[];
  confirmedAt: number;
  /** True when this answer replayed an earlier confirmation (reconfirm=same-cards). */
  replay: boolean;
}

/** A confirm that was refused although the transaction existed: the evidence tests look for. */
export interface RejectedConfirm {
  transactionId: string;
  paymentId: string | null;
  totalAmountRaw: string | null;
  reason: 'amount_mismatch' | 'invalid_amount' | 'missing_fields' | 'invalid_transaction';
  code: number;
  at: number;
}

export type CallOutcome = 'answered' | 'dropped' | 'hung';

export interface CallRecord {
  seq: number;
  at: number;
  endpoint: Endpoint | null;
  method: string;
  path: string;
  ip: string;
  /** Null when no answer was written (dropped or hung). */
  httpStatus: number | null;
  /** '11111' on success, the numeric error code otherwise, null without an answer. */
  providerCode: string | number | null;
  durationMs: number;
  outcome: CallOutcome;
  /** Raw request text with `password` redacted; other bytes untouched (money literals stay as sent). */
  rawBody: string;
  /** How the Authorization header looked; never its value. */
  authorization: 'missing' | 'bearer' | 'bare';
  tokenHeaderPresent: boolean;
  transactionId?: string;
}
