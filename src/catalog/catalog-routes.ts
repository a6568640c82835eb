import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { ifNoneMatchHits } from '../platform/http/etag.js';
import type { CatalogCache } from './catalog-cache.js';
import type { RenderedBody } from './catalog-snapshot.js';
import { DenominationList, DenominationOne, DenominationSchema, ListQuery, VendorList, VendorSchema } from './catalog-schemas.js';

const problems = { 401: { $ref: 'ProblemDetails#' }, 403: { $ref: 'ProblemDetails#' }, 429: { $ref: 'ProblemDetails#' } };
const notModified = { 304: Type.Null({ description: 'Not modified: the ETag in If-None-Match is current.' }) };

/**
 * Sends a pre-rendered body (built from explicit views, so it is an allowlist like a response
 * schema) or 304. Storefronts may keep answers and revalidate with If-None-Match.
 */
function sendRendered(request: FastifyRequest, reply: FastifyReply, rendered: RenderedBody) {
  void reply.header('etag', rendered.etag).header('cache-control', 'private, no-cache');
  if (ifNoneMatchHits(request.headers['if-none-match'], rendered.etag)) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(rendered.body);
}

export const catalogRoutes: FastifyPluginAsyncTypebox<{ cache: CatalogCache }> = async (app, { cache }) => {
  app.addSchema(VendorSchema);
  app.addSchema(DenominationSchema);
  const auth = app.requireScopes('catalog:read');

  app.get(
    '/v1/catalog/vendors',
    {
      onRequest: auth,
      // Identifiers are only looked up in memory; an odd one is simply not found.
      config: { inputGuard: false },
      schema: {
        tags: ['catalog'],
        summary: 'Vendors (card brands), from the local catalog cache',
        security: [{ apiKey: [] }],
        querystring: ListQuery,
        response: { 200: VendorList, ...notModified, ...problems },
      },
    },
    async (request, reply) => {
      const snapshot = cache.snapshot;
      const all = request.query.includeInactive === 'true';
      const rendered = snapshot.render(`vendors:${all}`, cache.isStale(snapshot), () => (all ? snapshot.vendors : snapshot.vendors.filter((v) => v.active)));
      return sendRendered(request, reply, rendered);
    },
  );

  app.get(
    '/v1/catalog/vendors/:vendorId/denominations',
    {
      onRequest: auth,
      // Identifiers are only looked up in memory; an odd one is simply not found.
      config: { inputGuard: false },
      schema: {
        tags: ['catalog'],
        summary: "A vendor's denominations with prices and last known stock",
        security: [{ apiKey: [] }],
        params: Type.Object({ vendorId: Type.String({ minLength: 1, maxLength: 200 }) }),
        querystring: ListQuery,
        response: { 200: DenominationList, ...notModified, ...problems, 404: { $ref: 'ProblemDetails#' } },
      },
    },
    async (request, reply) => {
      const snapshot = cache.snapshot;
      const { vendorId } = request.params;
      const denominations = snapshot.denominationsByVendor.get(vendorId);
      if (!denominations) throw new AppError('vendor_not_found', `No vendor with vendorId ${JSON.stringify(vendorId)} (identifiers are case-sensitive).`, { details: { vendorId } });
      const all = request.query.includeInactive === 'true';
      const rendered = snapshot.render(`denominations:${all}:${vendorId}`, cache.isStale(snapshot), () => (all ? denominations : denominations.filter((d) => d.active)));
      return sendRendered(request, reply, rendered);
    },
  );

  app.get(
    '/v1/catalog/denominations/:cardId',
    {
      onRequest: auth,
      // Identifiers are only looked up in memory; an odd one is simply not found.
      config: { inputGuard: false },
      schema: {
        tags: ['catalog'],
        summary: 'One denomination, active or not',
        security: [{ apiKey: [] }],
        params: Type.Object({ cardId: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: DenominationOne, ...notModified, ...problems, 404: { $ref: 'ProblemDetails#' } },
      },
    },
    async (request, reply) => {
      const snapshot = cache.snapshot;
      const { cardId } = request.params;
      const denomination = snapshot.denominationById.get(cardId);
      if (!denomination) throw new AppError('card_not_found', `No denomination with cardId ${JSON.stringify(cardId)} (identifiers are case-sensitive).`, { details: { cardId } });
      return sendRendered(request, reply, snapshot.render(`denomination:${cardId}`, cache.isStale(snapshot), () => denomination));
    },
  );
};
