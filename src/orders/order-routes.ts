import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { hasAnyScope } from '../security/scopes.js';
import { isTerminal } from './order-state.js';
import type { OrderService, StoredCard } from './order-service.js';
import type { OrderRow } from './order-store.js';
import { orderView, type CardDecrypter } from './order-view.js';
import { preferWaitSeconds, type OrderWaiters } from './order-waiters.js';

export interface OrderRoutesOptions {
  orders: OrderService;
  vault: CardDecrypter;
  waiters: OrderWaiters;
  maxQuantity: number;
}

const problem = { $ref: 'ProblemDetails#' };

/** Storefront keys see their own orders; support and admin keys see all. */
function viewer(request: FastifyRequest) {
  const key = request.apiKey!;
  return { apiKeyId: key.id, seeAll: hasAnyScope(key.scopes, ['support:read']) };
}

export const orderRoutes: FastifyPluginAsyncTypebox<OrderRoutesOptions> = async (app, { orders, vault, waiters, maxQuantity }) => {
  /** The API view; a fulfilled order's codes decrypted from `cards` when given (read with the order), else read now. */
  async function present({ order, cards }: { order: OrderRow; cards?: StoredCard[] | undefined }) {
    if (order.status !== 'fulfilled') return orderView(order);
    const stored = cards ?? (await orders.cardsOf(order.id));
    return orderView(
      order,
      stored.map((c) => ({
        code: vault.decrypt({ orderId: c.orderId, position: c.position, keyId: c.keyId, nonce: c.nonce, ciphertext: c.ciphertext }),
        number: c.cardNumber,
      })),
    );
  }

  /** Waits up to `seconds` for the order to settle; returns its latest state (with its cards once read). */
  async function settle(order: OrderRow, seconds: number | undefined): Promise<{ order: OrderRow; cards?: StoredCard[] }> {
    if (!seconds || isTerminal(order.status)) return { order };
    const everyone = { apiKeyId: order.apiKeyId, seeAll: true };
    let latest: { order: OrderRow; cards?: StoredCard[] } = { order };
    await waiters.wait(order.id, seconds * 1000, async () => {
      latest = (await orders.getWithCards(order.id, everyone)) ?? latest;
      return isTerminal(latest.order.status);
    });
    // Read once more only when the wait ended without seeing the order settle (woken, or timeout).
    if (isTerminal(latest.order.status)) return latest;
    return (await orders.getWithCards(order.id, everyone)) ?? latest;
  }

  app.post(
    '/v1/orders',
    {
      onRequest: app.requireScopes('orders:write'),
      schema: {
        tags: ['orders'],
        summary: 'Place an order (idempotent)',
        description:
          'Accepted orders are processed in the background (balance check, reservation, confirmation). ' +
          'Send the same Idempotency-Key to retry safely. `Prefer: wait=N` (N ≤ 60) answers once the order is settled, or after N seconds.',
        security: [{ apiKey: [] }],
        headers: Type.Object({
          'idempotency-key': Type.String({ pattern: '^[\\x20-\\x7E]{1,255}$', description: '1-255 printable ASCII characters, unique per order.' }),
          prefer: Type.Optional(Type.String()),
        }),
        body: Type.Object(
          {
            cardId: Type.String({ minLength: 1, maxLength: 200 }),
            quantity: Type.Integer({ minimum: 1, maximum: maxQuantity }),
            reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "The storefront's own order reference." })),
            expectedUnitPrice: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,15})(\\.[0-9]{1,6})?$', description: 'Refuse with 409 price_changed unless the price is still this.' })),
            callbackUrl: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: { $ref: 'Order#' }, 202: { $ref: 'Order#' }, 400: problem, 401: problem, 403: problem, 404: problem, 409: problem, 422: problem, 429: problem },
      },
    },
    async (request, reply) => {
      const wait = preferWaitSeconds(request.headers.prefer);
      const { order, replayed } = await orders.create(request.apiKey!.id, request.headers['idempotency-key'], request.body);
      const latest = await settle(order, wait);
      if (replayed) void reply.header('idempotent-replayed', 'true');
      if (wait !== undefined) void reply.header('preference-applied', `wait=${wait}`);
      const status = replayed || (wait !== undefined && isTerminal(latest.order.status)) ? 200 : 202;
      return reply.code(status).send(await present(latest));
    },
  );

  app.get(
    '/v1/orders/:id',
    {
      onRequest: app.requireScopes('orders:read', 'orders:write'),
      schema: {
        tags: ['orders'],
        summary: 'One order, with its cards once fulfilled',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        headers: Type.Object({ prefer: Type.Optional(Type.String()) }),
        response: { 200: { $ref: 'Order#' }, 400: problem, 401: problem, 403: problem, 404: problem, 429: problem },
      },
    },
    async (request) => {
      const found = await orders.getWithCards(request.params.id, viewer(request));
      if (!found) throw new AppError('order_not_found', 'No such order for this API key.', { details: { orderId: request.params.id } });
      const wait = preferWaitSeconds(request.headers.prefer);
      return present(wait && !isTerminal(found.order.status) ? await settle(found.order, wait) : found);
    },
  );

  app.get(
    '/v1/orders',
    {
      onRequest: app.requireScopes('orders:read', 'orders:write'),
      schema: {
        tags: ['orders'],
        summary: "The caller's orders with a storefront reference, newest first",
        security: [{ apiKey: [] }],
        querystring: Type.Object({ reference: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ data: Type.Array({ $ref: 'Order#' }) }), 400: problem, 401: problem, 403: problem, 429: problem },
      },
    },
    async (request) => {
      const found = await orders.findByReference(request.query.reference, viewer(request));
      return { data: await Promise.all(found.map((order) => present({ order }))) };
    },
  );
};
