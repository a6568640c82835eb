import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { createTestContext, type TestContext } from './helpers/context.js';
import { listRoutes, type RouteEntry } from './helpers/routes.js';

/** A concrete URL for a route pattern: each `:param` and `*` filled with a harmless dummy. */
function concreteUrl(path: string): string {
  return path.replace(/:[A-Za-z0-9_]+/g, '00000000-0000-4000-8000-000000000000').replace(/\*/g, 'x');
}

describe('every /v1 route requires an API key', () => {
  let ctx: TestContext;
  let app: App;
  let routes: RouteEntry[];

  beforeAll(async () => {
    ctx = await createTestContext();
    app = await ctx.app();
    routes = listRoutes(app).filter((r) => r.path.startsWith('/v1/') && r.method !== 'HEAD');
  });
  afterAll(() => ctx.close());

  it('finds the routes (the route listing is parsed as expected)', () => {
    expect(routes).toEqual(
      expect.arrayContaining([
        { method: 'GET', path: '/v1/me' },
        { method: 'GET', path: '/v1/catalog/vendors' },
        { method: 'GET', path: '/v1/catalog/vendors/:vendorId/denominations' },
        { method: 'GET', path: '/v1/catalog/denominations/:cardId' },
      ]),
    );
    expect(listRoutes(app)).toContainEqual({ method: 'GET', path: '/healthz' });
  });

  it('answers each without a key with 401 problem details', async () => {
    const unprotected: string[] = [];
    for (const route of routes) {
      const res = await app.inject({
        method: route.method as 'GET',
        url: concreteUrl(route.path),
        ...(['POST', 'PUT', 'PATCH'].includes(route.method) ? { payload: {} } : {}),
      });
      const isProblem = /^application\/problem\+json/.test(String(res.headers['content-type']));
      if (res.statusCode !== 401 || !isProblem || res.json<{ code?: string }>().code !== 'unauthorized') {
        unprotected.push(`${route.method} ${route.path} answered ${res.statusCode}`);
      }
    }
    expect(unprotected).toEqual([]);
  });
});
