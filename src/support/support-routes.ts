import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { orderView } from '../orders/order-view.js';
import type { SupportActions } from '../orders/support-actions.js';
import { hasAnyScope } from '../security/scopes.js';
import { GROUP_BY, salesReportCsv } from './sales-report.js';
import type { SupportService } from './support-service.js';

export interface SupportRoutesOptions {
  support: SupportService;
  actions: SupportActions;
  /** Time zone for day grouping in reports (TZ), default UTC. */
  timeZone: string;
}

const problem = { $ref: 'ProblemDetails#' };
const problems = { 400: problem, 401: problem, 403: problem, 404: problem, 409: problem, 429: problem };
const Names = Type.Object({ en: Type.String(), ar: Type.String() }, { additionalProperties: false });
const OrderSummary = Type.Intersect([Type.Ref('Order'), Type.Object({ storefront: Type.Union([Type.String(), Type.Null()]) })]);
const TimelineEntry = Type.Object(
  {
    id: Type.String(),
    at: Type.String({ format: 'date-time' }),
    kind: Type.String({ description: 'status | provider_call | callback | webhook | support | note' }),
    fromStatus: Type.Union([Type.String(), Type.Null()]),
    toStatus: Type.Union([Type.String(), Type.Null()]),
    endpoint: Type.Union([Type.String(), Type.Null()]),
    ok: Type.Union([Type.Boolean(), Type.Null()]),
    upstreamCode: Type.Union([Type.Integer(), Type.Null()]),
    durationMs: Type.Union([Type.Integer(), Type.Null()]),
    detail: Type.Unknown(),
  },
  { additionalProperties: false },
);
const AuditEntry = Type.Object(
  {
    id: Type.String(),
    at: Type.String({ format: 'date-time' }),
    actor: Type.String(),
    actorKeyId: Type.Union([Type.String(), Type.Null()]),
    action: Type.String(),
    orderId: Type.Union([Type.String(), Type.Null()]),
    sourceIp: Type.Union([Type.String(), Type.Null()]),
    detail: Type.Unknown(),
    hash: Type.String(),
    prevHash: Type.String(),
  },
  { additionalProperties: false },
);
const DateRange = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive, ISO 8601.' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive, ISO 8601.' })),
};

function actorOf(request: FastifyRequest) {
  const key = request.apiKey!;
  return { keyId: key.id, name: key.name, ip: request.ip };
}

const date = (v: string | undefined) => (v === undefined ? undefined : new Date(v));

export const supportRoutes: FastifyPluginAsyncTypebox<SupportRoutesOptions> = async (app, { support, actions, timeZone }) => {
  app.get(
    '/v1/support/orders',
    {
      onRequest: app.requireScopes('support:read'),
      schema: {
        tags: ['support'],
        summary: 'Find orders by order id, transaction id, transaction number or storefront reference (exact)',
        security: [{ apiKey: [] }],
        querystring: Type.Object(
          {
            q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            status: Type.Optional(Type.Union(['queued', 'reserving', 'reserved', 'confirming', 'fulfilled', 'failed', 'needs_attention'].map((s) => Type.Literal(s)))),
            ...DateRange,
            limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: '1-200, default 50' })),
            cursor: Type.Optional(Type.String({ format: 'uuid', description: 'nextCursor of the previous page' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(OrderSummary), nextCursor: Type.Union([Type.String(), Type.Null()]) }), ...problems },
      },
    },
    async (request) => {
      const { q, status, from, to, limit, cursor } = request.query;
      const found = await support.search({
        q,
        status: status,
        from: date(from),
        to: date(to),
        limit: Math.min(200, Number(limit ?? 50)),
        cursor,
      });
      return { data: found.orders.map((o) => ({ ...orderView(o), storefront: o.storefront })), nextCursor: found.nextCursor };
    },
  );

  app.get(
    '/v1/support/orders/:id',
    {
      onRequest: app.requireScopes('support:read'),
      schema: {
        tags: ['support'],
        summary: 'An order with its timeline (every step, provider call, callback and webhook); never the codes',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        response: {
          200: Type.Object({
            order: OrderSummary,
            previousTransactionNumbers: Type.Array(Type.Integer()),
            vendor: Type.Union([Type.Object({ vendorId: Type.String(), name: Names }), Type.Null()]),
            denominationName: Type.Union([Names, Type.Null()]),
            cardsStored: Type.Integer(),
            timeline: Type.Array(TimelineEntry),
            callbacks: Type.Array(Type.Object({ event: Type.String(), status: Type.String(), attempts: Type.Integer(), lastStatus: Type.Union([Type.Integer(), Type.Null()]), deliveredAt: Type.Union([Type.String(), Type.Null()]) })),
            webhooks: Type.Array(Type.Object({ id: Type.String(), type: Type.String(), status: Type.String(), receivedAt: Type.String() })),
          }),
          ...problems,
        },
      },
    },
    async (request) => {
      const d = await support.detail(request.params.id);
      return {
        order: { ...orderView(d.order), storefront: d.storefront },
        previousTransactionNumbers: d.order.previousTransactionNumbers.map(Number),
        vendor: d.denomination ? { vendorId: d.denomination.vendor.id, name: { en: d.denomination.vendor.nameEn, ar: d.denomination.vendor.nameAr } } : null,
        denominationName: d.denomination ? { en: d.denomination.nameEn, ar: d.denomination.nameAr } : null,
        cardsStored: d.cardsStored,
        timeline: d.events.map((e) => ({
          id: e.id.toString(),
          at: e.at.toISOString(),
          kind: e.kind,
          fromStatus: e.fromStatus,
          toStatus: e.toStatus,
          endpoint: e.endpoint,
          ok: e.ok,
          upstreamCode: e.upstreamCode,
          durationMs: e.durationMs,
          detail: e.detail,
        })),
        callbacks: d.callbacks.map((c) => ({ ...c, deliveredAt: c.deliveredAt?.toISOString() ?? null })),
        webhooks: d.webhooks.map((w) => ({ id: w.id, type: w.type, status: w.status, receivedAt: w.receivedAt.toISOString() })),
      };
    },
  );

  app.post(
    '/v1/support/orders/:id/reveal',
    {
      // Any valid key gets this far, so an attempt without the scope can be audited before the 403.
      onRequest: app.requireScopes(),
      schema: {
        tags: ['support'],
        summary: "Reveal an order's card codes (support:reveal); every reveal and refused attempt is audited",
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        body: Type.Optional(Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false })),
        response: {
          200: Type.Object({ orderId: Type.String(), cards: Type.Array(Type.Object({ code: Type.String(), number: Type.String() }, { additionalProperties: false })), auditId: Type.String() }),
          ...problems,
        },
      },
    },
    async (request) => {
      const actor = actorOf(request);
      if (!hasAnyScope(request.apiKey!.scopes, ['support:reveal'])) {
        await support.audit({ actorKeyId: actor.keyId, actorName: actor.name, action: 'reveal_denied', orderId: request.params.id, sourceIp: actor.ip, detail: { reason: 'missing scope support:reveal' } });
        throw new AppError('forbidden', 'This API key lacks the scope this route needs (support:reveal).', { details: { requiredScopes: ['support:reveal'] } });
      }
      const revealed = await support.reveal(request.params.id, actor, request.body?.reason);
      return { orderId: request.params.id, cards: revealed.cards, auditId: revealed.auditId.toString() };
    },
  );

  app.post(
    '/v1/support/orders/:id/retry',
    {
      onRequest: app.requireScopes('support:write'),
      schema: {
        tags: ['support'],
        summary: 'Retry a needs_attention order (see README: the same transaction_id, or a new transaction number once the provider confirms no reservation)',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        body: Type.Object({ note: Type.String({ minLength: 3, maxLength: 1000 }), noReservationConfirmed: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        response: { 200: { $ref: 'Order#' }, ...problems },
      },
    },
    async (request) => {
      const actor = actorOf(request);
      const order = await actions.retry(request.params.id, { keyId: actor.keyId, name: actor.name }, request.body);
      await support.audit({ actorKeyId: actor.keyId, actorName: actor.name, action: 'retry', orderId: order.id, sourceIp: actor.ip, detail: { note: request.body.note, toStatus: order.status } });
      return orderView(order);
    },
  );

  app.post(
    '/v1/support/orders/:id/resolve',
    {
      onRequest: app.requireScopes('support:write'),
      schema: {
        tags: ['support'],
        summary: 'Resolve a needs_attention order as failed, or as fulfilled with codes recovered at the provider',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        body: Type.Object(
          {
            outcome: Type.Union([Type.Literal('failed'), Type.Literal('fulfilled')]),
            note: Type.String({ minLength: 3, maxLength: 1000 }),
            cards: Type.Optional(Type.Array(Type.Object({ code: Type.String({ minLength: 1, maxLength: 200 }), number: Type.String({ maxLength: 200 }) }, { additionalProperties: false }), { maxItems: 1000 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: { $ref: 'Order#' }, ...problems },
      },
    },
    async (request) => {
      const actor = actorOf(request);
      const order = await actions.resolve(request.params.id, { keyId: actor.keyId, name: actor.name }, request.body);
      await support.audit({
        actorKeyId: actor.keyId,
        actorName: actor.name,
        action: 'resolve',
        orderId: order.id,
        sourceIp: actor.ip,
        detail: { note: request.body.note, outcome: request.body.outcome, cardsEntered: request.body.cards?.length ?? 0 },
      });
      return orderView(order);
    },
  );

  app.get(
    '/v1/support/audit',
    {
      onRequest: app.requireScopes('support:reveal'),
      schema: {
        tags: ['support'],
        summary: 'Audit log entries, newest first (support:reveal or admin)',
        security: [{ apiKey: [] }],
        querystring: Type.Object(
          { ...DateRange, orderId: Type.Optional(Type.String({ format: 'uuid' })), limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(AuditEntry) }), ...problems },
      },
    },
    async (request) => {
      const entries = await support.auditEntries({ from: date(request.query.from), to: date(request.query.to), orderId: request.query.orderId, limit: Math.min(500, Number(request.query.limit ?? 100)) });
      return {
        data: entries.map((e) => ({
          id: e.id.toString(),
          at: e.at.toISOString(),
          actor: e.actorName,
          actorKeyId: e.actorKeyId,
          action: e.action,
          orderId: e.orderId,
          sourceIp: e.sourceIp,
          detail: e.detail,
          hash: e.hash,
          prevHash: e.prevHash,
        })),
      };
    },
  );

  app.get(
    '/v1/support/queues',
    {
      onRequest: app.requireScopes('support:read'),
      schema: {
        tags: ['support'],
        summary: 'Queue health: jobs waiting, running, delayed (e.g. held by busy mode or backing off) and failed, per queue',
        security: [{ apiKey: [] }],
        response: {
          200: Type.Object({ data: Type.Array(Type.Object({ name: Type.String(), waiting: Type.Integer(), active: Type.Integer(), delayed: Type.Integer(), failed: Type.Integer() })) }),
          ...problems,
        },
      },
    },
    async () => ({ data: await support.queueHealth() }),
  );

  app.get(
    '/v1/support/reports/sales',
    {
      onRequest: app.requireScopes('support:read'),
      schema: {
        tags: ['support'],
        summary: 'Sales of fulfilled orders by day, vendor or denomination (JSON, or CSV with Accept: text/csv)',
        security: [{ apiKey: [] }],
        querystring: Type.Object(
          {
            from: Type.String({ format: 'date-time' }),
            to: Type.String({ format: 'date-time' }),
            groupBy: Type.Optional(Type.Union(GROUP_BY.map((g) => Type.Literal(g)))),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            from: Type.String(),
            to: Type.String(),
            groupBy: Type.String(),
            timeZone: Type.String(),
            rows: Type.Array(Type.Object({ key: Type.String(), nameEn: Type.String(), nameAr: Type.String(), orders: Type.Integer(), quantity: Type.Integer(), amount: Type.String() })),
            total: Type.Object({ orders: Type.Integer(), quantity: Type.Integer(), amount: Type.String() }),
          }),
          ...problems,
        },
      },
    },
    async (request, reply) => {
      const from = new Date(request.query.from);
      const to = new Date(request.query.to);
      if (!(from < to)) throw new AppError('bad_request', '`from` must be before `to`.');
      if (to.getTime() - from.getTime() > 400 * 86_400_000) throw new AppError('bad_request', 'A report covers at most 400 days.');
      const report = await support.salesReport({ from, to, groupBy: (request.query.groupBy ?? 'day'), timeZone });
      if ((request.headers.accept ?? '').includes('text/csv')) {
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="sales-${report.groupBy}-${request.query.from.slice(0, 10)}-${request.query.to.slice(0, 10)}.csv"`)
          .send(salesReportCsv(report));
      }
      return report;
    },
  );
};
