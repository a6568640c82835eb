import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../../errors.js';

/**
 * The support console: `GET /console` and its assets under `/console/…`, plain HTML, CSS and
 * JavaScript modules served as they are (no build step). The page needs no key; every data call
 * it makes sends the support key the person entered (kept in sessionStorage only).
 *
 * The files live in `src/support/console/assets/` and are read once, when the plugin registers.
 * Under tsx they sit next to this file; after `tsc` this file runs from `dist/support/console/`,
 * where they are found if copied there, else in the project's `src/` (see findConsoleAssets).
 */

export interface ConsolePluginOptions {
  /** Directory holding index.html and the other assets; found automatically when omitted. */
  assetsDir?: string;
}

/** Headers on every console response: nothing inline, nothing from elsewhere, never cached or framed. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Asset names: one level, no dot files, no path separators. */
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9]+)+$/;

interface Asset {
  body: Buffer;
  type: string;
}

/** Where the assets are: next to this module (src/ under tsx, or dist/ if copied), else the project's src/. */
export function findConsoleAssets(moduleUrl: string = import.meta.url): string | undefined {
  const here = path.dirname(fileURLToPath(moduleUrl));
  const candidates = [
    path.join(here, 'assets'),
    // dist/support/console → <root>/src/support/console/assets
    path.resolve(here, '..', '..', '..', 'src', 'support', 'console', 'assets'),
  ];
  return candidates.find((dir) => existsSync(path.join(dir, 'index.html')));
}

/** Reads every servable file of `dir` into memory. */
export function loadConsoleAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const type = CONTENT_TYPES[path.extname(name).toLowerCase()];
    const file = path.join(dir, name);
    if (!type || !ASSET_NAME.test(name) || !statSync(file).isFile()) continue;
    assets.set(name, { body: readFileSync(file), type });
  }
  return assets;
}

function withSecurityHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers(CONSOLE_SECURITY_HEADERS);
}

/** Not wrapped in fastify-plugin on purpose: its hook and routes stay in their own context. */
export default async function consolePlugin(app: FastifyInstance, options: ConsolePluginOptions = {}): Promise<void> {
  const dir = options.assetsDir ?? findConsoleAssets();
  const assets = dir ? loadConsoleAssets(dir) : new Map<string, Asset>();
  const index = assets.get('index.html');
  if (!index) {
    // A missing console must not take the gateway (and its purchases) down: log it and answer 503.
    app.log.error({ assetsDir: dir ?? null }, 'support console assets not found (src/support/console/assets); /console answers 503');
  }

  // Problems (404, 503) for console URLs carry the same headers as the page.
  app.addHook('onSend', async (_request, reply) => {
    withSecurityHeaders(reply);
  });

  const serve = (reply: FastifyReply, name: string) => {
    if (!index) throw new AppError('service_unavailable', 'The support console is not installed on this instance.');
    const asset = assets.get(name);
    if (!asset) throw new AppError('not_found', 'No such console file.');
    return withSecurityHeaders(reply).type(asset.type).send(asset.body);
  };

  const routeOptions = { schema: { hide: true } };
  app.get('/console', routeOptions, async (_request, reply) => serve(reply, 'index.html'));
  app.get<{ Params: { '*': string } }>('/console/*', routeOptions, async (request, reply) => {
    const name = request.params['*'];
    if (name === '') return serve(reply, 'index.html');
    if (!ASSET_NAME.test(name)) throw new AppError('not_found', 'No such console file.');
    return serve(reply, name);
  });
}

export { consolePlugin };
