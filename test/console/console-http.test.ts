import Fastify from 'fastify';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import consolePlugin, { CONSOLE_SECURITY_HEADERS, findConsoleAssets } from '../../src/support/console/console-plugin.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

function expectSecurityHeaders(headers: Record<string, unknown>) {
  expect(headers['content-security-policy']).toBe(CSP);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['cache-control']).toBe('no-store');
}

describe('support console over HTTP', () => {
  let ctx: TestContext;
  let app: App;

  beforeAll(async () => {
    ctx = await createTestContext();
    // The app registers the console itself.
    app = await ctx.app();
  });
  afterAll(() => ctx.close());

  it('answers GET /console with the page and strict security headers, no key needed', async () => {
    for (const url of ['/console', '/console/']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expectSecurityHeaders(res.headers);
      expect(res.body).toContain('<script type="module" src="/console/app.js"></script>');
      // Nothing inline the CSP would have to allow.
      expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(res.body).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
    }
    expect(CONSOLE_SECURITY_HEADERS['content-security-policy']).toBe(CSP);
  });

  it('serves its assets with the right content types', async () => {
    const expected: Record<string, string> = {
      '/console/app.js': 'text/javascript; charset=utf-8',
      '/console/api.js': 'text/javascript; charset=utf-8',
      '/console/ui.js': 'text/javascript; charset=utf-8',
      '/console/chart.js': 'text/javascript; charset=utf-8',
      '/console/console.css': 'text/css; charset=utf-8',
      '/console/index.html': 'text/html; charset=utf-8',
      '/console/favicon.svg': 'image/svg+xml',
    };
    for (const [url, type] of Object.entries(expected)) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toBe(type);
      expectSecurityHeaders(res.headers);
    }
    const head = await app.inject({ method: 'HEAD', url: '/console/app.js' });
    expect(head.statusCode).toBe(200);
  });

  it('answers 404 (a problem, with the same headers) for unknown or traversing asset paths', async () => {
    for (const url of ['/console/nope.js', '/console/../package.json', '/console/%2e%2e%2fpackage.json', '/console/assets/app.js', '/console/.env', '/console/console-plugin.ts']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toMatch(/^application\/problem\+json/);
      // `/console/../x` is normalised to `/x` before routing: the gateway's own 404, not the console's.
      if (!url.includes('/../')) expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('keeps the console out of the OpenAPI document', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
  });

  it('finds its assets from src/ (tsx) and from dist/ (compiled) alike', () => {
    const root = path.resolve(import.meta.dirname, '..', '..');
    const fromSrc = findConsoleAssets(pathToFileURL(path.join(root, 'src/support/console/console-plugin.ts')).href);
    const fromDist = findConsoleAssets(pathToFileURL(path.join(root, 'dist/support/console/console-plugin.js')).href);
    expect(fromSrc).toBe(path.join(root, 'src/support/console/assets'));
    // dist/ has them only if a build step copied them; otherwise the project's src/ is used.
    expect([path.join(root, 'dist/support/console/assets'), fromSrc]).toContain(fromDist);
    expect(existsSync(path.join(fromDist!, 'index.html'))).toBe(true);
  });

  it('answers 503 instead of failing the gateway when the assets are missing', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'console-empty-'));
    writeFileSync(path.join(empty, 'readme.txt'), 'no index.html here');
    const bare = Fastify({ loggerInstance: ctx.log });
    await bare.register(consolePlugin, { assetsDir: empty });
    const res = await bare.inject({ method: 'GET', url: '/console' });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('service_unavailable');
    expect(ctx.logs.text).toContain('support console assets not found');
    await bare.close();
  });
});
