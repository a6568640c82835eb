import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ProblemDetails } from './problem.js';

/**
 * OpenAPI generated from the route schemas: `GET /docs` (UI) and `GET /docs/json`.
 * Must be registered before any route so every route is collected.
 */
async function docsPlugin(app: FastifyInstance, { version }: { version: string }): Promise<void> {
  app.addSchema(ProblemDetails);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Gift-card gateway',
        version,
        description:
          'Internal API of the merchant-side gift-card gateway. Errors are RFC 9457 problem details with a stable `code`; authenticate with `Authorization: Bearer <api key>`.',
      },
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key created with `gateway keys create`' } },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
}

export default fp(docsPlugin, { name: 'docs' });
