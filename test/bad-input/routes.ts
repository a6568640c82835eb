import type { App } from '../../src/app.js';
import { listRoutes } from '../helpers/routes.js';
import {
  BAD_ACCEPT,
  BAD_AUTHORIZATION,
  BAD_HEADER_VALUES,
  BAD_PREFER,
  STRUCTURAL_BODIES,
  badBodies,
  badStrings,
  patternsIn,
  sampleOf,
  type ParamSpec,
  type Schema,
} from './generators.js';

export interface RouteInfo {
  method: string;
  /** Fastify's pattern: `/v1/orders/:id`, `/console/*`. */
  path: string;
  params: ParamSpec[];
  query: ParamSpec[];
  headers: ParamSpec[];
  body?: Schema;
  /** False for routes the OpenAPI document hides (console, docs): no schema to derive from. */
  documented: boolean;
}

/**
 * Every route of the app, from `printRoutes({ commonPrefix: false })` (as test/routes-auth does),
 * with its input schemas from the OpenAPI document the app generates from the same route schemas.
 */
export function enumerateRoutes(app: App): RouteInfo[] {
  const found = listRoutes(app);
  const doc = app.swagger() as { paths?: Record<string, Record<string, { parameters?: (ParamSpec & { schema: Schema })[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }>> };
  return found.map(({ method, path }) => {
    const openapiPath = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    // HEAD is the GET route answered without a body; OpenAPI lists only the GET.
    const op = doc.paths?.[openapiPath]?.[method === 'HEAD' ? 'get' : method.toLowerCase()];
    const parameters = op?.parameters ?? [];
    const params: ParamSpec[] = parameters.filter((p) => p.in === 'path');
    // Path parameters of routes without a documented schema (wildcards) are free strings.
    for (const name of [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!)) {
      if (!params.some((p) => p.name === name)) params.push({ name, in: 'path', required: true, schema: { type: 'string' } });
    }
    if (path.endsWith('*')) params.push({ name: '*', in: 'path', required: true, schema: { type: 'string' } });
    const body = op?.requestBody?.content?.['application/json']?.schema;
    return {
      method,
      path,
      params,
      query: parameters.filter((p) => p.in === 'query'),
      headers: parameters.filter((p) => p.in === 'header'),
      ...(body ? { body } : {}),
      documented: op !== undefined,
    };
  });
}

/** Every `pattern` in a route's schemas (each needs a sample in PATTERN_SAMPLES). */
export function routePatterns(route: RouteInfo): string[] {
  const found = new Set<string>();
  for (const p of [...route.params, ...route.query, ...route.headers]) patternsIn(p.schema, found);
  patternsIn(route.body, found);
  return [...found];
}

/** One request to send. `auth` decides whether the runner adds the admin key. */
export interface Probe {
  route: string;
  name: string;
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  body?: string | Buffer;
  auth: 'admin' | 'none';
  /** Sent with a real (seeded) resource id: a 2xx on a write would mean the generator made a valid request. */
  seeded?: boolean;
}

/** Percent-encodes anything, lone surrogates included (encodeURIComponent throws on those). */
export function enc(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');
  }
}

/** Path segments sent as they are (already encoded, or deliberately not). */
const RAW_SEGMENTS = ['%', '%ZZ', '%E0%A4%A', '%C0%AE%C0%AE', '%00', '%u0000', '..', '.', '%2e%2e', '..%2f..%2fetc%2fpasswd', '%2F', ';x=1', '%3Bx', 'a'.repeat(101), '%F0%9F%98%80', "'", '%27%20OR%201=1'];

const RAW_QUERIES = ['a=1&a=2', 'x', '%zz=1', '=', '&&&=&', '__proto__=x', 'constructor[prototype][x]=1', 'q[$gt]=', `x=${'a'.repeat(20_000)}`, '?', '#frag'];

export interface ProbeContext {
  /** Orders the suite created before the snapshot (one fulfilled, one needs_attention). */
  seededOrderIds: string[];
  /** Stored webhook events of a type no handler knows (a replay of one is refused). */
  seededWebhookIds: string[];
  apiBodyLimit: number;
  webhookBodyLimit: number;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'TRACE'];

/** The requests fed to one route: each one invalid in one way (or several). */
export function probesFor(route: RouteInfo, all: RouteInfo[], ctx: ProbeContext): Probe[] {
  const label = `${route.method} ${route.path}`;
  const baseParams = Object.fromEntries(route.params.map((p) => [p.name, p.name === '*' ? 'x' : enc(String(sampleOf(p.schema)))]));
  const baseQuery: [string, string][] = route.query.filter((q) => q.required).map((q) => [q.name, String(sampleOf(q.schema))]);
  const baseHeaders: Record<string, string | string[]> = Object.fromEntries(route.headers.filter((h) => h.required).map((h) => [h.name, String(sampleOf(h.schema))]));
  const jsonHeaders = (h: Record<string, string | string[]>) => ({ 'content-type': 'application/json', ...h });
  const baseBody = route.body ? JSON.stringify(sampleOf(route.body)) : undefined;
  const url = (params: Record<string, string> = baseParams, query: [string, string][] | string = baseQuery) => {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => params[name] ?? '').replace(/\*$/, params['*'] ?? '');
    const qs = typeof query === 'string' ? query : query.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
    return qs ? `${path}?${qs}` : path;
  };
  const probes: Probe[] = [];
  const add = (name: string, p: Partial<Probe> = {}) => {
    const headers = { ...(baseBody !== undefined && p.body === undefined ? jsonHeaders(baseHeaders) : baseHeaders), ...p.headers };
    const body = p.body ?? baseBody;
    for (const auth of p.auth ? [p.auth] : (['admin', 'none'] as const)) {
      probes.push({ route: label, name, method: p.method ?? route.method, url: p.url ?? url(), headers, ...(body !== undefined ? { body } : {}), auth, ...(p.seeded ? { seeded: true } : {}) });
    }
  };

  add('base (valid shape, ids that name nothing)');

  // Path parameters.
  for (const param of route.params) {
    const values = param.name === '*' ? ['', 'index.html/../../package.json', '../.env', '.hidden', 'a/b', 'x.js\u0000.html', 'INDEX.HTML'] : badStrings(param.schema);
    values.forEach((v, i) => add(`param ${param.name} #${i}`, { url: url({ ...baseParams, [param.name]: enc(v) }) }));
    RAW_SEGMENTS.forEach((raw, i) => add(`param ${param.name} raw #${i}`, { url: url({ ...baseParams, [param.name]: raw }) }));
  }

  // Query string.
  for (const q of route.query) {
    badStrings(q.schema).forEach((v, i) => add(`query ${q.name} #${i}`, { url: url(baseParams, [...baseQuery.filter(([k]) => k !== q.name), [q.name, v]]) }));
    add(`query ${q.name} twice`, { url: url(baseParams, [...baseQuery, [q.name, String(sampleOf(q.schema))], [q.name, String(sampleOf(q.schema))]]) });
    add(`query ${q.name}[]`, { url: url(baseParams, [...baseQuery.filter(([k]) => k !== q.name), [`${q.name}[]`, 'x'], [`${q.name}[a]`, 'y']]) });
    if (q.required) add(`query ${q.name} missing`, { url: url(baseParams, baseQuery.filter(([k]) => k !== q.name)) });
  }
  add('query unknown parameter', { url: url(baseParams, [...baseQuery, ['unexpected', '1']]) });
  RAW_QUERIES.forEach((raw, i) => add(`query raw #${i}`, { url: url(baseParams, [...baseQuery.map(([k, v]) => `${enc(k)}=${enc(v)}`), raw].join('&')) }));

  // Headers the route declares.
  for (const h of route.headers) {
    BAD_HEADER_VALUES.forEach((v, i) => add(`header ${h.name} #${i}`, { headers: { [h.name]: v } }));
    if (h.required) {
      const without = { ...baseHeaders };
      delete without[h.name];
      add(`header ${h.name} missing`, { headers: without, ...(baseBody !== undefined ? { body: baseBody, headers: jsonHeaders(without) } : {}) });
    }
  }

  // Bodies.
  const takesBody = route.body !== undefined || WRITE_METHODS.has(route.method);
  if (route.body) {
    for (const v of badBodies(route.body)) add(`body ${v.name}`, { body: v.body, headers: jsonHeaders(baseHeaders) });
  }
  if (takesBody) {
    for (const s of STRUCTURAL_BODIES) {
      const headers: Record<string, string | string[]> = { ...baseHeaders };
      if (s.contentType === undefined) headers['content-type'] = 'application/json';
      else if (s.contentType !== 'none') headers['content-type'] = s.contentType;
      add(`body ${s.name}`, { body: s.body, headers });
    }
    const limit = route.path === '/webhooks/upstream' ? ctx.webhookBodyLimit : ctx.apiBodyLimit;
    const padded = (size: number) => {
      const head = '{"pad":"';
      return head + 'a'.repeat(size - head.length - 2) + '"}';
    };
    add('body one byte over the limit', { body: padded(limit + 1), headers: jsonHeaders(baseHeaders) });
    add('body 1 MiB', { body: padded(1024 * 1024), headers: jsonHeaders(baseHeaders) });
    add('body at the limit, not JSON', { body: 'x'.repeat(limit), headers: jsonHeaders(baseHeaders) });
    add('body none with json content-type', { body: '', headers: jsonHeaders(baseHeaders) });
    add('content-length smaller than body', { body: baseBody ?? '{"a":1}', headers: { ...jsonHeaders(baseHeaders), 'content-length': '2' } });
    add('content-length larger than body', { body: baseBody ?? '{"a":1}', headers: { ...jsonHeaders(baseHeaders), 'content-length': '100000' } });
    add('content-length negative', { body: baseBody ?? '{"a":1}', headers: { ...jsonHeaders(baseHeaders), 'content-length': '-1' } });
    add('content-length garbage', { body: baseBody ?? '{"a":1}', headers: { ...jsonHeaders(baseHeaders), 'content-length': 'abc' } });
    add('content-type twice', { body: baseBody ?? '{}', headers: { ...baseHeaders, 'content-type': ['application/json', 'text/plain'] } });
  } else {
    add('body on a GET', { body: '{"a":1}', headers: jsonHeaders(baseHeaders) });
    add('bad JSON body on a GET', { body: '{', headers: jsonHeaders(baseHeaders) });
  }

  // Headers every route might read.
  BAD_ACCEPT.forEach((v, i) => add(`accept #${i}`, { headers: { accept: v } }));
  BAD_PREFER.forEach((v, i) => add(`prefer #${i}`, { headers: { prefer: v } }));
  if (!route.headers.some((h) => h.name === 'idempotency-key')) BAD_HEADER_VALUES.slice(0, 6).forEach((v, i) => add(`idempotency-key #${i}`, { headers: { 'idempotency-key': v } }));
  for (const [i, v] of ['', 'a'.repeat(65), '../x', 'x\ty', ['a', 'b'], '😀'].entries()) add(`x-request-id #${i}`, { headers: { 'x-request-id': v } });
  for (const [i, v] of ['*', 'W/"x"', '"', '""', ','.repeat(5000), Array.from({ length: 2000 }, (_, n) => `"${n}"`).join(','), ['"a"', '"b"']].entries()) add(`if-none-match #${i}`, { headers: { 'if-none-match': v } });
  add('x-forwarded-for spoof', { headers: { 'x-forwarded-for': '127.0.0.1, ::1, not-an-ip, ' + '1.1.1.1,'.repeat(500) } });
  add('host odd', { headers: { host: 'evil.invalid:99999' } });

  // Authorization: malformed or unknown keys (sent without the admin key).
  BAD_AUTHORIZATION.forEach((v, i) => add(`authorization #${i}`, { headers: { authorization: v }, auth: 'none' }));

  // Methods the path does not have.
  const methods = new Set(all.filter((r) => r.path === route.path).map((r) => r.method));
  for (const m of OTHER_METHODS) if (!methods.has(m)) add(`method ${m}`, { method: m, ...(m === 'POST' || m === 'PUT' || m === 'PATCH' ? { body: '{}', headers: jsonHeaders(baseHeaders) } : {}) });

  // Real resource ids, with inputs that must still be refused (bodies) or only read (GETs).
  const isWebhookRoute = route.path.startsWith('/v1/support/webhooks/');
  const uuidParam = route.params.find((p) => p.schema.format === 'uuid' || (isWebhookRoute && p.name === 'id'));
  if (uuidParam) {
    for (const id of isWebhookRoute ? ctx.seededWebhookIds : ctx.seededOrderIds) {
      const seededUrl = url({ ...baseParams, [uuidParam.name]: enc(id) });
      if (!WRITE_METHODS.has(route.method)) {
        add(`seeded ${uuidParam.name}`, { url: seededUrl, seeded: true, auth: 'admin' });
        BAD_PREFER.forEach((v, i) => add(`seeded prefer #${i}`, { url: seededUrl, headers: { prefer: v }, seeded: true, auth: 'admin' }));
        BAD_ACCEPT.forEach((v, i) => add(`seeded accept #${i}`, { url: seededUrl, headers: { accept: v }, seeded: true, auth: 'admin' }));
      } else {
        const refused = STRUCTURAL_BODIES.filter((s) => s.contentType === undefined && !['json:null', 'json:empty', 'json:bom'].includes(s.name));
        for (const s of refused) add(`seeded body ${s.name}`, { url: seededUrl, body: s.body, headers: jsonHeaders(baseHeaders), seeded: true, auth: 'admin' });
        if (route.body?.additionalProperties === false) add('seeded body extra field', { url: seededUrl, body: JSON.stringify({ ...(sampleOf(route.body) as object), unexpected: 1 }), headers: jsonHeaders(baseHeaders), seeded: true, auth: 'admin' });
      }
      if (WRITE_METHODS.has(route.method)) {
        add('seeded body over the limit', { url: seededUrl, body: `{"pad":"${'a'.repeat(ctx.apiBodyLimit)}"}`, headers: jsonHeaders(baseHeaders), seeded: true, auth: 'admin' });
      }
    }
  }

  if (route.path === '/webhooks/upstream') probes.push(...webhookProbes(label));
  // HEAD runs the GET route's hooks and handler: its own parse of path and query is what differs.
  if (route.method === 'HEAD') return probes.filter((p) => /^(base|param \S+ raw|query raw|seeded \w+$|method|authorization #[0-3]$)/.test(p.name));
  // Static pages (docs, console) read no body, query or custom header.
  if (!route.documented) return probes.filter((p) => /^(base|param|method|authorization|accept|body on a GET|x-request-id)/.test(p.name));
  return probes;
}

/** Deliveries with missing, malformed or wrong Standard Webhooks headers: all must be refused. */
function webhookProbes(label: string): Probe[] {
  const now = Math.floor(Date.now() / 1000);
  const body = '{"type":"order.status_updated","timestamp":"2024-01-01T00:00:00Z","data":{}}';
  const good = { 'webhook-id': 'msg_bad_input', 'webhook-timestamp': String(now), 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };
  const variants: [string, Record<string, string | string[]>][] = [
    ['no webhook headers', {}],
    ['no id', { ...good, 'webhook-id': '' }],
    ['no timestamp', { ...good, 'webhook-timestamp': '' }],
    ['no signature', { ...good, 'webhook-signature': '' }],
    ['wrong signature', good],
    ...['abc', '-1', '1e10', '1.5', '99999999999999', '0', String(now - 100_000), String(now + 100_000), ` ${now}`, `${now}\t`, '٠'].map((ts, i): [string, Record<string, string>] => [`timestamp #${i}`, { ...good, 'webhook-timestamp': ts }]),
    ...['v1,', 'v1', 'v2,AAAA', 'v1,!!!!', 'v1,' + 'A'.repeat(10_000), Array.from({ length: 1000 }, () => 'v1,AAAA').join(' '), 'v1,AAAA v1,BBBB', '\u00ff'].map((s, i): [string, Record<string, string>] => [`signature #${i}`, { ...good, 'webhook-signature': s }]),
    ...['a'.repeat(10_000), '../x', 'é', '\u00a0'].map((id, i): [string, Record<string, string>] => [`id #${i}`, { ...good, 'webhook-id': id }]),
    ['headers twice', { 'webhook-id': ['a', 'b'], 'webhook-timestamp': [String(now), String(now)], 'webhook-signature': [good['webhook-signature'], good['webhook-signature']] }],
  ];
  const out: Probe[] = [];
  for (const [name, headers] of variants) {
    for (const contentType of ['application/json', 'text/plain']) {
      out.push({ route: label, name: `webhook ${name} (${contentType})`, method: 'POST', url: '/webhooks/upstream', headers: { ...headers, 'content-type': contentType }, body, auth: 'none' });
    }
  }
  return out;
}
