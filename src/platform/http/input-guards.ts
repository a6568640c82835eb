import { AppError } from '../../errors.js';

/**
 * Formats stricter than ajv-formats' defaults, for every route schema:
 * - uuid: ajv-formats also accepts `urn:uuid:…`, which PostgreSQL rejects (a 500, and Prisma's
 *   batching of concurrent lookups then fails the valid ones beside it);
 * - date-time: RFC 3339 allows a leap second (`…23:59:60Z`) that JavaScript's Date cannot hold.
 */
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

function isStorableDateTime(value: string): boolean {
  if (!DATE_TIME.test(value)) return false;
  const ms = Date.parse(value);
  // Years 1 to 9999: what PostgreSQL's timestamptz and every client can store.
  return !Number.isNaN(ms) && ms >= Date.UTC(1, 0, 1) && ms < Date.UTC(10000, 0, 1);
}

/** An ajv plugin (Fastify's `ajv.plugins`) replacing the uuid and date-time formats. */
export function strictFormats<A extends { addFormat(name: string, format: RegExp | { type: 'string'; validate: (v: string) => boolean }): unknown }>(ajv: A): A {
  ajv.addFormat('uuid', UUID);
  ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime });
  return ajv;
}

const MAX_DEPTH = 32;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a decoded JSON value (or parameter) cannot be stored, or undefined when it can:
 * PostgreSQL text and jsonb refuse NUL characters and lone UTF-16 surrogates, and very deep
 * nesting is an attack on the stack of whatever walks it next.
 */
export function unstorable(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) return 'contains a NUL character';
    // A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
    if (LONE_SURROGATE.test(value)) return 'contains an unpaired surrogate';
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return undefined;
  if (depth >= MAX_DEPTH) return `is nested more than ${MAX_DEPTH} levels deep`;
  // for…in over own keys rather than Object.entries: no arrays allocated on every request.
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const problem = unstorable(key, depth + 1) ?? unstorable((value as Record<string, unknown>)[key], depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/** A preValidation check for params, query string or body: 400 validation_failed, nothing stored. */
export function rejectUnstorable(where: 'path' | 'query' | 'body', value: unknown): void {
  const problem = unstorable(value);
  if (problem) throw new AppError('validation_failed', `The request ${where} ${problem}.`, { details: { errors: [{ path: where, message: problem }] } });
}
