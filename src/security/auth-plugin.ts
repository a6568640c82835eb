import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';
import type { ApiKeyIdentity, ApiKeyService } from './api-keys.js';
import { hasAnyScope, type Scope } from './scopes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated API key, set by `requireScopes` hooks. */
    apiKey: ApiKeyIdentity | null;
  }
  interface FastifyInstance {
    /** onRequest hook: a valid key holding any one of `scopes` (admin holds all; none listed = any valid key), else 401/403. */
    requireScopes(...scopes: Scope[]): onRequestAsyncHookHandler;
  }
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

async function authPlugin(app: FastifyInstance, { apiKeys }: { apiKeys: ApiKeyService }): Promise<void> {
  app.decorateRequest('apiKey', null);

  app.decorate('requireScopes', (...scopes: Scope[]): onRequestAsyncHookHandler => {
    return async function requireScopes(request) {
      const presented = bearerToken(request);
      if (!presented) {
        throw new AppError('unauthorized', 'Send an API key as "Authorization: Bearer <key>".', {
          headers: { 'www-authenticate': 'Bearer' },
        });
      }
      const identity = await apiKeys.authenticate(presented);
      if (!identity) {
        throw new AppError('unauthorized', 'The API key is not valid or has been revoked.', {
          headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
        });
      }
      request.apiKey = identity;
      if (scopes.length > 0 && !hasAnyScope(identity.scopes, scopes)) {
        throw new AppError('forbidden', `This API key lacks the scope this route needs (${scopes.join(' or ')}).`, {
          details: { requiredScopes: scopes },
        });
      }
    };
  });
}

export default fp(authPlugin, { name: 'auth', dependencies: ['error-handler'] });
