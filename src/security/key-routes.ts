import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';

const KeyIdentity = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    prefix: Type.String({ description: 'The visible, non-secret part of the key.' }),
    scopes: Type.Array(Type.String()),
    rateLimit: Type.Union(
      [
        Type.Object(
          {
            limit: Type.Integer({ description: 'Requests allowed per window.' }),
            remaining: Type.Integer({ description: 'Requests left in the current window (this one counted).' }),
            resetSeconds: Type.Integer({ description: 'Seconds until the window ends.' }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: "The key's rate-limit budget now; null when the counter store cannot be read." },
    ),
  },
  { additionalProperties: false },
);

/** `GET /v1/me`: which key is this, with which scopes and budget; lets a storefront check its set-up. */
export const keyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // The limiter's own view of a key (same store, same bucket), read without counting.
  const budgetOf = app.createRateLimit();

  app.get(
    '/v1/me',
    {
      onRequest: app.requireScopes(),
      schema: {
        tags: ['keys'],
        summary: 'The calling API key, its scopes and its rate-limit budget',
        security: [{ apiKey: [] }],
        response: { 200: KeyIdentity, 401: { $ref: 'ProblemDetails#' }, 429: { $ref: 'ProblemDetails#' } },
      },
    },
    async (request) => {
      const key = request.apiKey!;
      const budget = await budgetOf(request, { increment: false }).catch(() => undefined);
      const rateLimit =
        budget && !budget.isAllowed && budget.ttl > 0 ? { limit: budget.max, remaining: budget.remaining, resetSeconds: budget.ttlInSeconds } : null;
      return { id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes, rateLimit };
    },
  );
};
