import { Type, type Static } from 'typebox';
import { orderTotal } from './money.js';
import type { OrderRow } from './order-store.js';

export interface CardDecrypter {
  decrypt(input: { orderId: string; position: number; keyId: string; nonce: Uint8Array; ciphertext: Uint8Array }): string;
}

export const OrderSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.Union([
      Type.Literal('queued'),
      Type.Literal('reserving'),
      Type.Literal('reserved'),
      Type.Literal('confirming'),
      Type.Literal('fulfilled'),
      Type.Literal('failed'),
      Type.Literal('needs_attention'),
    ]),
    statusDetail: Type.Union([Type.String(), Type.Null()], { description: 'Why the order waits (e.g. provider_busy), or what support must look at.' }),
    cardId: Type.String(),
    quantity: Type.Integer(),
    unitPrice: Type.String({ description: 'Decimal string, as the catalog had it when the order was accepted.' }),
    totalAmount: Type.String({ description: 'unitPrice × quantity, exact decimal.' }),
    reference: Type.Union([Type.String(), Type.Null()]),
    transactionNumber: Type.Integer({ description: "The gateway's integer reference sent to the provider." }),
    transactionId: Type.Union([Type.String(), Type.Null()], { description: "The provider's transaction id; quote it in any support request." }),
    failure: Type.Union([
      Type.Object({ code: Type.String(), message: Type.String(), upstreamCode: Type.Union([Type.Integer(), Type.Null()]) }, { additionalProperties: false }),
      Type.Null(),
    ]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    fulfilledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    cards: Type.Union([Type.Array(Type.Object({ code: Type.String(), number: Type.String() }, { additionalProperties: false })), Type.Null()], {
      description: 'Only when fulfilled. Card codes have monetary value: deliver them, do not log them.',
    }),
  },
  { $id: 'Order', additionalProperties: false },
);

export type OrderView = Static<typeof OrderSchema>;

/** The API's view of an order; `cards` decrypted only for a fulfilled order and only when given. */
export function orderView(order: OrderRow, cards: { code: string; number: string }[] | null = null): OrderView {
  return {
    id: order.id,
    status: order.status,
    statusDetail: order.statusDetail,
    cardId: order.cardId,
    quantity: order.quantity,
    unitPrice: order.unitPrice,
    totalAmount: orderTotal(order.unitPrice, order.quantity),
    reference: order.reference,
    transactionNumber: Number(order.transactionNumber),
    transactionId: order.transactionId,
    failure: order.failureCode ? { code: order.failureCode, message: order.failureMessage ?? '', upstreamCode: order.failureUpstreamCode } : null,
    createdAt: order.createdAt.toISOString(),
    updatedAt: order.updatedAt.toISOString(),
    fulfilledAt: order.fulfilledAt?.toISOString() ?? null,
    cards: order.status === 'fulfilled' ? cards : null,
  };
}
