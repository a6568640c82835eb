import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
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
    requireScopes(...scopes: Scope[]): onRequestHookHandler;
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

  const invalid = () =>
    new AppError('unauthorized', 'The API key is not valid or has been revoked.', { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } });

  app.decorate('requireScopes', (...scopes: Scope[]): onRequestHookHandler => {
    const admit = (request: FastifyRequest, identity: ApiKeyIdentity | undefined): AppError | undefined => {
      if (!identity) return invalid();
      request.apiKey = identity;
      if (scopes.length > 0 && !hasAnyScope(identity.scopes, scopes)) {
        return new AppError('forbidden', `This API key lacks the scope this route needs (${scopes.join(' or ')}).`, { details: { requiredScopes: scopes } });
      }
      return undefined;
    };
    // A callback hook, not an async one: a key already verified and cached (nearly every
    // request) is admitted without a single promise; only a cache miss waits for the database.
    return function requireScopes(request, _reply, done) {
      const presented = bearerToken(request);
      if (!presented) {
        done(new AppError('unauthorized', 'Send an API key as "Authorization: Bearer <key>".', { headers: { 'www-authenticate': 'Bearer' } }));
        return;
      }
      const cached = apiKeys.authenticateCached(presented);
      if (cached !== 'pending') {
        done(admit(request, cached));
        return;
      }
      apiKeys.authenticate(presented).then(
        (identity) => done(admit(request, identity)),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    };
  });
}

export default fp(authPlugin, { name: 'auth', dependencies: ['error-handler'] });
