/**
 * Hand-written generators of invalid input, derived from each route's own JSON schema (as the
 * OpenAPI document publishes it). Deterministic: the same schema always yields the same cases,
 * so a failure names a case that can be replayed.
 */

/** A JSON schema, as far as these generators look into it. */
export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  maxItems?: number;
  minItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  minimum?: number;
  maximum?: number;
}

/** A route parameter (path, query or header) as OpenAPI lists it. */
export interface ParamSpec {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

/** A UUID no row has (the suite's database is fresh; random v4 UUIDs do not collide). */
export const NONEXISTENT_UUID = '7a3c1e2f-0b4d-4e6f-8a9b-0c1d2e3f4a5b';

/**
 * One valid sample per `pattern` found in a route schema. A schema with a pattern missing here
 * fails the suite's "every route is covered" test: add a sample (and the pattern's violations are
 * generated from it).
 */
export const PATTERN_SAMPLES: Readonly<Record<string, string>> = {
  '^[\\x20-\\x7E]{1,255}$': 'bad-input-idempotency-key',
  '^(0|[1-9][0-9]{0,15})(\\.[0-9]{1,6})?$': '0.10',
  '^[1-9][0-9]{0,2}$': '10',
  '^https?://': 'https://storefront.invalid/hooks',
};

/** Strings that break naive code: encodings, unicode edge cases, injections, number-like text. */
export const NASTY_STRINGS: readonly string[] = [
  '',
  ' ',
  '   padded   ',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '0',
  '-1',
  '-0',
  '1e308',
  '-1e308',
  '1e400',
  '9223372036854775807',
  '9223372036854775808',
  '18446744073709551616',
  '999999999999999999',
  '0.1e-400',
  'NaN',
  'Infinity',
  '0x1F',
  '1_000',
  'a'.repeat(201),
  'a'.repeat(1001),
  'a'.repeat(5000),
  '\u0000',
  'a\u0000b',
  '\u0001\u0002\u0003\u001f\u007f',
  '\u202Eevil\u202C',
  '\u200F\u200E\u200B\u2066',
  '😀'.repeat(40),
  '👨‍👩‍👧‍👦',
  '\uD800',
  '\uDFFF',
  'x\uD83Dy',
  'e\u0301\u0301\u0301',
  '\uFEFFbom',
  'جوجل بلاي',
  'ﷺ',
  'İstanbul ß ǅ',
  '\uFFFF\uFFFE',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '/',
  '%00',
  '%',
  '%E0%A4%A',
  "' OR '1'='1",
  "'; DROP TABLE orders; --",
  '" OR 1=1 --',
  "\\'; SELECT pg_sleep(5); --",
  '{"$gt":""}',
  '$where',
  '<script>alert(1)</script>',
  '${jndi:ldap://x.invalid/a}',
  '{{7*7}}',
  '__proto__',
  'constructor',
  '\r\nX-Injected: 1',
  '\t\n\r',
];

/** Malformed UUIDs (and a few well-formed spellings the database might still choke on). */
export const BAD_UUIDS: readonly string[] = [
  '00000000-0000-0000-0000-00000000000',
  '00000000-0000-0000-0000-0000000000000',
  'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
  '{7a3c1e2f-0b4d-4e6f-8a9b-0c1d2e3f4a5b}',
  'urn:uuid:7a3c1e2f-0b4d-4e6f-8a9b-0c1d2e3f4a5b',
  '7a3c1e2f0b4d4e6f8a9b0c1d2e3f4a5b',
  '7A3C1E2F-0B4D-4E6F-8A9B-0C1D2E3F4A5B',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  ` ${NONEXISTENT_UUID}`,
  `${NONEXISTENT_UUID}\u0000`,
  `${NONEXISTENT_UUID}x`,
  '7a3c1e2f-0b4d-4e6f-8a9b-0c1d2e3f4a5\u0661',
];

/** Date-times: invalid, and valid to the schema's format but odd for JavaScript or PostgreSQL. */
export const ODD_DATE_TIMES: readonly string[] = [
  '2024-13-01T00:00:00Z',
  '2024-02-30T00:00:00Z',
  '2023-02-29T00:00:00Z',
  '2016-12-31T23:59:60Z',
  '2024-06-30T23:59:60Z',
  '2024-01-01t00:00:00z',
  '2024-01-01 00:00:00Z',
  '2024-01-01T00:00:00',
  '2024-01-01',
  '2024-01-01T24:00:00Z',
  '2024-01-01T00:00:00+24:00',
  '2024-01-01T00:00:00+23:59',
  '2024-01-01T00:00:00.123456789123Z',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '+275760-09-13T00:00:00Z',
  '-271821-04-20T00:00:00Z',
  '1970-01-01T00:00:00Z',
  'yesterday',
  '1700000000',
  '2024-01-01T00:00:00Z\u0000',
];

/** JSON values of every type, to put where one type is expected. */
export const ANY_JSON: readonly unknown[] = [null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 63, -(2 ** 63), 2 ** 53 + 1, '', 'x', [], ['x'], [1, 2], {}, { a: 1 }, { $gt: '' }];

/** Raw JSON number literals JSON.stringify cannot produce (spliced into a body as text). */
export const RAW_NUMBERS: readonly string[] = ['1e400', '-1e400', '1e-400', '-0', '0.0', '1.0', '00', '01', '+1', '.5', '5.', '0x10', 'NaN', 'Infinity', '-Infinity', '1_0', '9'.repeat(400)];

export function typesOf(schema: Schema): string[] {
  if (schema.anyOf) return [...new Set(schema.anyOf.flatMap(typesOf))];
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

function enumOf(schema: Schema): unknown[] | undefined {
  if (schema.enum) return schema.enum;
  if (schema.anyOf && schema.anyOf.every((s) => s.enum)) return schema.anyOf.flatMap((s) => s.enum!);
  return undefined;
}

export function patternsIn(schema: Schema | undefined, found: Set<string> = new Set()): Set<string> {
  if (!schema) return found;
  if (schema.pattern) found.add(schema.pattern);
  for (const s of Object.values(schema.properties ?? {})) patternsIn(s, found);
  if (schema.items) patternsIn(schema.items, found);
  for (const s of schema.anyOf ?? []) patternsIn(s, found);
  return found;
}

/** A valid-shaped value for the schema: ids point at nothing, so the request reads at most. */
export function sampleOf(schema: Schema): unknown {
  const values = enumOf(schema);
  if (values) return values[0];
  const type = typesOf(schema)[0];
  switch (type) {
    case 'string': {
      if (schema.format === 'uuid') return NONEXISTENT_UUID;
      if (schema.format === 'date-time') return '2024-01-01T00:00:00Z';
      if (schema.pattern) {
        const sample = PATTERN_SAMPLES[schema.pattern];
        if (sample === undefined) throw new Error(`no sample for pattern ${schema.pattern}: add one to PATTERN_SAMPLES`);
        return sample;
      }
      if (schema.format === 'uri') return 'https://storefront.invalid/hooks';
      return 'no-such-' + 'x'.repeat(Math.max(0, (schema.minLength ?? 1) - 8));
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = sampleOf(schema.properties![name]!);
      return out;
    }
    default:
      return 'x';
  }
}

/** Strings that violate a string schema (length, pattern, format, enum), plus the nasty corpus. */
export function badStrings(schema: Schema): string[] {
  const out = new Set<string>(NASTY_STRINGS);
  if (schema.maxLength !== undefined) {
    out.add('a'.repeat(schema.maxLength + 1));
    out.add('😀'.repeat(schema.maxLength));
    out.add('\u0000'.repeat(schema.maxLength));
  }
  if (schema.minLength !== undefined && schema.minLength > 0) out.add('a'.repeat(schema.minLength - 1));
  if (schema.format === 'uuid') BAD_UUIDS.forEach((v) => out.add(v));
  if (schema.format === 'date-time') ODD_DATE_TIMES.forEach((v) => out.add(v));
  if (schema.format === 'uri' || schema.pattern === '^https?://') {
    for (const v of ['javascript:alert(1)', 'file:///etc/passwd', 'http://', 'https://', 'http://127.0.0.1:6379/', 'https://a b.invalid/', 'ftp://x.invalid/', 'https://x.invalid/' + 'a'.repeat(2001), 'HTTPS://X.INVALID/', 'https://[::1', '//x.invalid']) out.add(v);
  }
  const values = enumOf(schema);
  if (values) {
    for (const v of values) {
      const s = String(v);
      out.add(s.toUpperCase());
      out.add(` ${s}`);
      out.add(`${s}\u0000`);
      out.add(`${s},${s}`);
    }
  }
  if (schema.pattern) {
    const sample = PATTERN_SAMPLES[schema.pattern] ?? 'x';
    for (const v of [`${sample}\n`, `\n${sample}`, `${sample}é`, `${sample}\u0000`, sample.repeat(300)]) out.add(v);
    if (schema.pattern.includes('[0-9]')) for (const v of ['0', '-1', '1000', '999', '1.5', '01', '1e3', '0.1234567', '12345678901234567.1', '1,5', ' 1']) out.add(v);
  }
  return [...out];
}

/** JSON values that violate a schema by type or by range. */
export function badValues(schema: Schema): unknown[] {
  const types = typesOf(schema);
  const out: unknown[] = ANY_JSON.filter((v) => !types.includes(jsonType(v)) && !(types.includes('number') && typeof v === 'number'));
  if (types.includes('string')) out.push(...badStrings(schema));
  if (types.includes('integer') || types.includes('number')) {
    const min = schema.minimum ?? 0;
    const max = schema.maximum ?? 1e9;
    out.push(min - 1, max + 1, min - 0.5, 0, -1, 1.5, 1e308, -1e308, 2 ** 63, -(2 ** 63), 2 ** 31, 2 ** 53 + 2, Number.MIN_VALUE, String(min), `${max}`);
  }
  if (types.includes('boolean')) out.push('true', 'false', 0, 1, 'yes');
  if (types.includes('array')) {
    const item = schema.items ? sampleOf(schema.items) : 'x';
    out.push(Array.from({ length: (schema.maxItems ?? 1000) + 1 }, () => item));
    if (schema.items) for (const bad of badValues(schema.items).slice(0, 40)) out.push([bad]);
    out.push([item, null], { 0: item, length: 1 });
  }
  if (types.includes('object') && schema.properties) {
    const base = sampleOf(schema) as Record<string, unknown>;
    out.push({ ...base, unexpected: 1 });
    for (const name of schema.required ?? []) {
      const copy = { ...base };
      delete copy[name];
      out.push(copy);
    }
  }
  return out;
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** A body for a JSON object schema with one property replaced (or removed, or added). */
export interface BodyVariant {
  name: string;
  body: string;
}

/**
 * Invalid bodies for an object schema: each property with every bad value, each required
 * property missing, unknown properties, raw number literals, nested junk.
 */
export function badBodies(schema: Schema): BodyVariant[] {
  const base = sampleOf(schema) as Record<string, unknown>;
  const out: BodyVariant[] = [];
  const props = schema.properties ?? {};
  for (const [name, prop] of Object.entries(props)) {
    badValues(prop).forEach((value, i) => out.push({ name: `${name}=bad#${i}`, body: JSON.stringify({ ...base, [name]: value }) }));
    if (typesOf(prop).some((t) => t === 'integer' || t === 'number')) {
      for (const raw of RAW_NUMBERS) out.push({ name: `${name}=raw:${raw.slice(0, 12)}`, body: `{${Object.entries(base).filter(([k]) => k !== name).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)},`).join('')}${JSON.stringify(name)}:${raw}}` });
    }
  }
  for (const name of schema.required ?? []) {
    const copy = { ...base };
    delete copy[name];
    out.push({ name: `missing:${name}`, body: JSON.stringify(copy) });
  }
  out.push({ name: 'missing:all', body: '{}' });
  out.push({ name: 'extra:field', body: JSON.stringify({ ...base, unexpected: 'x' }) });
  out.push({ name: 'extra:many', body: JSON.stringify({ ...base, ...Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, i])) }) });
  out.push({ name: 'extra:__proto__', body: `{${Object.entries(base).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)},`).join('')}"__proto__":{"isAdmin":true}}` });
  out.push({ name: 'extra:constructor', body: JSON.stringify({ ...base, constructor: { prototype: { isAdmin: true } } }) });
  out.push({ name: 'extra:unicode-key', body: JSON.stringify({ ...base, ['\u202E\u0000😀']: 1 }) });
  const first = Object.keys(props)[0];
  if (first) {
    out.push({ name: 'duplicate-key', body: `{${Object.entries(base).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)},`).join('')}${JSON.stringify(first)}:{"nested":[1,2,3]}}` });
    out.push({ name: 'escaped-key', body: JSON.stringify({ ...base }).replace(`"${first}"`, `"${first.split('').map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`) + ' ' });
  }
  return out;
}

/** Bodies that are not a JSON object at all (for any JSON route). */
export const STRUCTURAL_BODIES: readonly { name: string; body: string | Buffer; contentType?: string }[] = [
  { name: 'json:truncated', body: '{"cardId":"x","quantity":' },
  { name: 'json:open-brace', body: '{' },
  { name: 'json:trailing-comma', body: '{"a":1,}' },
  { name: 'json:single-quotes', body: "{'a':1}" },
  { name: 'json:unquoted', body: '{a:1}' },
  { name: 'json:comment', body: '{"a":1 /* c */}' },
  { name: 'json:two-docs', body: '{}{}' },
  { name: 'json:garbage-after', body: '{} x' },
  { name: 'json:NaN', body: 'NaN' },
  { name: 'json:nul', body: 'nul' },
  { name: 'json:bad-escape', body: '{"a":"\\x41"}' },
  { name: 'json:bad-unicode-escape', body: '{"a":"\\uZZZZ"}' },
  { name: 'json:raw-control-char', body: '{"a":"x\u0001y"}' },
  { name: 'json:raw-nul', body: '{"a":"x\u0000y"}' },
  { name: 'json:lone-surrogate-escape', body: '{"a":"\\ud800"}' },
  { name: 'json:bom', body: '\uFEFF{}' },
  { name: 'json:invalid-utf8', body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]) },
  { name: 'json:utf16le', body: Buffer.from('{"a":1}', 'utf16le') },
  { name: 'json:whitespace-only', body: ' \n\t ' },
  { name: 'json:null', body: 'null' },
  { name: 'json:array', body: '[]' },
  { name: 'json:array-of-object', body: '[{}]' },
  { name: 'json:string', body: '"x"' },
  { name: 'json:number', body: '1' },
  { name: 'json:huge-number', body: '1e400' },
  { name: 'json:true', body: 'true' },
  { name: 'json:deep-array', body: '['.repeat(30_000) + ']'.repeat(30_000) },
  { name: 'json:deep-object', body: '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000) },
  { name: 'json:proto-pollution', body: '{"__proto__":{"polluted":true}}' },
  { name: 'json:constructor-pollution', body: '{"constructor":{"prototype":{"polluted":true}}}' },
  { name: 'json:empty', body: '' },
  { name: 'ctype:text/plain', body: '{}', contentType: 'text/plain' },
  { name: 'ctype:form', body: 'cardId=x&quantity=1', contentType: 'application/x-www-form-urlencoded' },
  { name: 'ctype:multipart', body: '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b--\r\n', contentType: 'multipart/form-data; boundary=b' },
  { name: 'ctype:xml', body: '<a/>', contentType: 'application/xml' },
  { name: 'ctype:octet', body: Buffer.from([0, 1, 2, 3]), contentType: 'application/octet-stream' },
  { name: 'ctype:jsonx', body: '{}', contentType: 'application/jsonx' },
  { name: 'ctype:json-latin1', body: '{}', contentType: 'application/json; charset=latin1' },
  { name: 'ctype:json-utf16', body: '{}', contentType: 'application/json; charset=utf-16' },
  { name: 'ctype:json-upper', body: '{', contentType: 'APPLICATION/JSON' },
  { name: 'ctype:json-params', body: '{', contentType: 'application/json;;;; x=' },
  { name: 'ctype:empty', body: '{}', contentType: '' },
  { name: 'ctype:garbage', body: '{}', contentType: '\u0000/\u0000' },
  { name: 'ctype:star', body: '{}', contentType: '*/*' },
  { name: 'ctype:problem', body: '{', contentType: 'application/problem+json' },
  { name: 'ctype:none', body: '{}', contentType: 'none' },
];

/** Header values to put in a header the route declares, or that the gateway reads anyway. */
export const BAD_HEADER_VALUES: readonly (string | string[])[] = [
  '',
  ' ',
  'a'.repeat(256),
  'a'.repeat(8_000),
  'é',
  'ÿ\u00a0',
  '\t',
  'x\ty',
  '😀',
  '\u202E',
  ['one', 'two'],
  ['', ''],
  'null',
  '-1',
  '1e308',
];

export const BAD_PREFER: readonly (string | string[])[] = [
  'wait=-1',
  'wait=0',
  'wait=61',
  'wait=999999',
  'wait=99999999999999999999',
  'wait=1e308',
  'wait=NaN',
  'wait=abc',
  'wait=',
  'wait',
  'wait="5"',
  'wait=5, wait=9999',
  'return=minimal; wait=1',
  'respond-async, wait=1',
  'handling=strict',
  'wait=\u0661',
  ['wait=1', 'wait=2'],
  ';;;,,,',
  'a'.repeat(8_000),
];

export const BAD_ACCEPT: readonly (string | string[])[] = [
  'application/xml',
  'text/csv',
  'text/html',
  '*/*;q=0',
  'application/json;q=0',
  'image/png',
  'text/csv; charset=utf-16',
  'garbage',
  '',
  ['text/csv', 'application/json'],
  'a/' + 'b'.repeat(4_000),
];

export const BAD_AUTHORIZATION: readonly (string | string[])[] = [
  '',
  'Bearer',
  'Bearer ',
  'Bearer  ',
  'bearer',
  'Basic dXNlcjpwYXNz',
  'Token abc',
  'Bearer gwk_',
  'Bearer gwk_aaaaaaaaaaaa_',
  'Bearer gwk_aaaaaaaaaaaa_' + 'b'.repeat(43),
  'Bearer gwk_' + 'a'.repeat(12) + '_' + 'b'.repeat(10_000),
  'Bearer ' + 'x'.repeat(8_000),
  "Bearer ' OR 1=1 --",
  'Bearer %00',
  'Bearer a b c',
  'Bearer\tabc',
  ['Bearer a', 'Bearer b'],
  'Bearer ÿÿÿÿ',
];
