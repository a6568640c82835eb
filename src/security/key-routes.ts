import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';

const KeyIdentity = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    prefix: Type.String({ description: 'The visible, non-secret part of the key.' }),
    scopes: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

/** `GET /v1/me`: which key is this, with which scopes; lets a storefront check its set-up. */
export const keyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/me',
    {
      onRequest: app.requireScopes(),
      schema: {
        tags: ['keys'],
        summary: 'The calling API key and its scopes',
        security: [{ apiKey: [] }],
        response: { 200: KeyIdentity, 401: { $ref: 'ProblemDetails#' }, 429: { $ref: 'ProblemDetails#' } },
      },
    },
    async (request) => {
      const key = request.apiKey!;
      return { id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes };
    },
  );
};
