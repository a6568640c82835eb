import { Decimal } from 'decimal.js';
import type { Order } from '../../generated/prisma/client.js';

/** The events a storefront can receive at its callbackUrl, one per terminal status. */
export const CALLBACK_EVENTS = ['order.fulfilled', 'order.failed', 'order.needs_attention'] as const;
export type CallbackEvent = (typeof CALLBACK_EVENTS)[number];

const EVENT_BY_STATUS: Partial<Record<Order['status'], CallbackEvent>> = {
  fulfilled: 'order.fulfilled',
  failed: 'order.failed',
  needs_attention: 'order.needs_attention',
};

/** The event a status change announces, or undefined for statuses storefronts are not told about. */
export function callbackEventForStatus(status: Order['status']): CallbackEvent | undefined {
  return EVENT_BY_STATUS[status];
}

/**
 * The order fields a callback may carry: an allowlist. The order row type has more (lease,
 * counters, the callback URL) and the pipeline may hold cards next to it; none of that can reach
 * the body because the body is built field by field from this type.
 */
export type CallbackOrder = Pick<
  Order,
  | 'id'
  | 'status'
  | 'cardId'
  | 'quantity'
  | 'unitPrice'
  | 'reference'
  | 'transactionNumber'
  | 'transactionId'
  | 'failureCode'
  | 'failureMessage'
  | 'failureUpstreamCode'
  | 'createdAt'
  | 'updatedAt'
  | 'fulfilledAt'
> & {
  /** Prisma's Decimal, or a decimal string. */
  totalAmount: { toString(): string } | string;
};

export interface CallbackFailure {
  code: string;
  message: string;
  upstreamCode: number | null;
}

export interface CallbackData {
  orderId: string;
  status: Order['status'];
  cardId: string;
  quantity: number;
  unitPrice: string;
  totalAmount: string;
  reference: string | null;
  transactionNumber: string;
  transactionId: string | null;
  failure: CallbackFailure | null;
  createdAt: string;
  updatedAt: string;
  fulfilledAt: string | null;
}

/** The callback body: `{ type, timestamp, data }`, the Standard Webhooks shape. */
export interface CallbackPayload {
  type: CallbackEvent;
  timestamp: string;
  data: CallbackData;
}

/**
 * Every key a serialized body may hold, in the order it is written. JSON.stringify with an array
 * replacer keeps only these keys, at every depth, in this order: PostgreSQL's jsonb does not keep
 * key order, so this is what makes every attempt send the same bytes, and it is a second
 * allowlist should a stored payload ever hold more than it should.
 */
const BODY_KEYS = [
  'type',
  'timestamp',
  'data',
  'orderId',
  'status',
  'cardId',
  'quantity',
  'unitPrice',
  'totalAmount',
  'reference',
  'transactionNumber',
  'transactionId',
  'failure',
  'code',
  'message',
  'upstreamCode',
  'createdAt',
  'updatedAt',
  'fulfilledAt',
];

/**
 * The stored total written as the order view writes it (orderTotal in ../money.ts): with the unit
 * price's number of decimals, so "0.10" x 3 is "0.30" in the API and in the callback alike.
 * NUMERIC(20,6) reads back as "0.300000", hence the re-formatting.
 */
function totalString(total: { toString(): string } | string, unitPrice: string): string {
  const dot = unitPrice.indexOf('.');
  const places = dot === -1 ? 0 : unitPrice.length - dot - 1;
  const value = new Decimal(total.toString());
  // Never round money away: fall back to the exact value if the total has more decimals.
  return value.decimalPlaces() <= places ? value.toFixed(places) : value.toFixed();
}

function failureOf(order: CallbackOrder): CallbackFailure | null {
  if (order.failureCode === null) return null;
  return { code: order.failureCode, message: order.failureMessage ?? '', upstreamCode: order.failureUpstreamCode };
}

export function buildCallbackPayload(order: CallbackOrder, event: CallbackEvent, now: Date = new Date()): CallbackPayload {
  return {
    type: event,
    timestamp: now.toISOString(),
    data: {
      orderId: order.id,
      status: order.status,
      cardId: order.cardId,
      quantity: order.quantity,
      unitPrice: order.unitPrice,
      totalAmount: totalString(order.totalAmount, order.unitPrice),
      reference: order.reference,
      // A BigInt in the database; a string so no JSON parser rounds it.
      transactionNumber: order.transactionNumber.toString(),
      transactionId: order.transactionId,
      failure: failureOf(order),
      createdAt: order.createdAt.toISOString(),
      updatedAt: order.updatedAt.toISOString(),
      fulfilledAt: order.fulfilledAt ? order.fulfilledAt.toISOString() : null,
    },
  };
}

/** The exact bytes sent (and signed) for a stored payload; the same on every attempt. */
export function serializeCallbackPayload(payload: unknown): string {
  return JSON.stringify(payload, BODY_KEYS);
}
