import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PrismaClient } from '../platform/db.js';
import type { QueueRegistry } from '../platform/queues.js';
import type { TopicMapper } from './topics.js';
import { MAX_LIST_LIMIT, WEBHOOK_STATUSES, listWebhookEvents, replayWebhookEvent, webhookEventView } from './webhook-admin.js';

export interface WebhookAdminRoutesOptions {
  prisma: Pick<PrismaClient, 'webhookEvent'>;
  queues: QueueRegistry;
  mapper?: Pick<TopicMapper, 'topicOf'>;
}

const problem = { $ref: 'ProblemDetails#' };
const nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

/** The response allowlist: an undeclared column can never reach a client. */
export const WebhookEventSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.String({ description: "The provider's type as sent." }),
    topic: nullable(Type.String({ description: 'order_status, order_created, order_final, busy_on, busy_off; null when unknown.' })),
    status: Type.Union(WEBHOOK_STATUSES.map((s) => Type.Literal(s))),
    flagged: Type.Boolean({ description: 'Unknown type, or fields looking like card codes were removed.' }),
    deliveries: Type.Integer({ description: 'How many times the provider sent it.' }),
    attempts: Type.Integer({ description: 'Processing attempts.' }),
    lastError: nullable(Type.String()),
    orderId: nullable(Type.String()),
    sourceIp: nullable(Type.String()),
    occurredAt: nullable(Type.String({ format: 'date-time' })),
    receivedAt: Type.String({ format: 'date-time' }),
    processedAt: nullable(Type.String({ format: 'date-time' })),
    payload: Type.Unknown({ description: 'The body as stored (card-code-like fields removed).' }),
  },
  { $id: 'WebhookEvent' },
);

export const webhookAdminRoutes: FastifyPluginAsyncTypebox<WebhookAdminRoutesOptions> = async (app, { prisma, queues, mapper }) => {
  app.addSchema(WebhookEventSchema);

  app.get(
    '/v1/support/webhooks',
    {
      onRequest: app.requireScopes('support:read'),
      schema: {
        tags: ['support'],
        summary: 'Stored provider webhook events, newest first',
        security: [{ apiKey: [] }],
        querystring: Type.Object(
          {
            status: Type.Optional(Type.Union(WEBHOOK_STATUSES.map((s) => Type.Literal(s)))),
            type: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            orderId: Type.Optional(Type.String({ format: 'uuid' })),
            from: Type.Optional(Type.String({ format: 'date-time', description: 'receivedAt at or after' })),
            to: Type.Optional(Type.String({ format: 'date-time', description: 'receivedAt before' })),
            limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: `1-${MAX_LIST_LIMIT}, default 50` })),
            cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ data: Type.Array(Type.Ref('WebhookEvent')), nextCursor: Type.Union([Type.String(), Type.Null()]) }),
          400: problem,
          401: problem,
          403: problem,
          429: problem,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listWebhookEvents(prisma, {
        ...(q.status ? { status: q.status } : {}),
        ...(q.type ? { type: q.type } : {}),
        ...(q.orderId ? { orderId: q.orderId } : {}),
        ...(q.from ? { from: new Date(q.from) } : {}),
        ...(q.to ? { to: new Date(q.to) } : {}),
        ...(q.limit ? { limit: Math.min(Number(q.limit), MAX_LIST_LIMIT) } : {}),
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
      return { data: page.data.map(webhookEventView), nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/v1/support/webhooks/:id/replay',
    {
      onRequest: app.requireScopes('support:write'),
      schema: {
        tags: ['support'],
        summary: 'Process a stored provider webhook event again',
        description: 'Sets the event back to received and queues it; the handlers are idempotent.',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 500 }) }),
        response: { 202: Type.Ref('WebhookEvent'), 401: problem, 403: problem, 404: problem, 409: problem, 429: problem },
      },
    },
    async (request, reply) => {
      const row = await replayWebhookEvent(prisma, queues, request.params.id, mapper);
      return reply.code(202).send(webhookEventView(row));
    },
  );
};
