import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { errorCodes } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError, ERROR_CODES, ERROR_STATUS } from '../src/errors.js';
import { FASTIFY_CODES, toProblem } from '../src/platform/http/error-handler.js';

const SRC = path.resolve(import.meta.dirname, '../src');

/** Every hand-written source file (the generated Prisma client excluded). */
async function sourceFiles(): Promise<{ file: string; text: string }[]> {
  const entries = await readdir(SRC, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !f.includes(`${path.sep}generated${path.sep}`));
  return Promise.all(files.map(async (file) => ({ file: path.relative(SRC, file), text: await readFile(file, 'utf8') })));
}

const request = { id: 'req-1' } as never;

describe('application errors', () => {
  it('maps every code to an HTTP error status', () => {
    expect(ERROR_CODES.length).toBeGreaterThan(10);
    for (const code of ERROR_CODES) {
      expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
      const status = ERROR_STATUS[code];
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
      expect(new AppError(code, 'x').status).toBe(status);
    }
  });

  it('has a status for every code the source throws or answers with', async () => {
    const used = new Map<string, string>();
    for (const { file, text } of await sourceFiles()) {
      for (const m of text.matchAll(/new AppError\(\s*'([^']+)'/g)) used.set(m[1]!, file);
      for (const m of text.matchAll(/\bproblem\(\s*[^,()]+,\s*'([^']+)'/g)) used.set(m[1]!, file);
    }
    // Not vacuous: the scan does find the codes the error handler and the routes use.
    expect(used.size).toBeGreaterThan(5);
    for (const [code, file] of used) expect(ERROR_STATUS, `${code} (in src/${file})`).toHaveProperty(code);
  });

  it('maps only real Fastify error codes, each to a known code', () => {
    const fastifyCodes = new Set(Object.keys(errorCodes));
    for (const [fastifyCode, code] of Object.entries(FASTIFY_CODES)) {
      expect(fastifyCodes.has(fastifyCode), fastifyCode).toBe(true);
      expect(ERROR_STATUS, fastifyCode).toHaveProperty(code);
    }
  });

  it('turns an AppError into problem details with its code and details', () => {
    const { body } = toProblem(new AppError('price_changed', 'The price changed.', { details: { currentUnitPrice: '9.99' } }), request);
    expect(body).toMatchObject({ type: 'about:blank', title: 'Conflict', status: 409, code: 'price_changed', detail: 'The price changed.', currentUnitPrice: '9.99', requestId: 'req-1' });
  });

  it('never shows the message of a 5xx, nor of an unexpected error', () => {
    const internal = toProblem(new AppError('upstream_unavailable', 'token abc123 rejected by 10.0.0.5'), request).body;
    expect(internal.status).toBe(502);
    expect(JSON.stringify(internal)).not.toContain('abc123');
    const unexpected = toProblem(new TypeError('cannot read properties of undefined (reading "secret")'), request).body;
    expect(unexpected).toMatchObject({ status: 500, code: 'internal_error' });
    expect(JSON.stringify(unexpected)).not.toContain('secret');
  });

  it('never lets a detail override the problem members', () => {
    const { body } = toProblem(new AppError('order_not_actionable', 'No.', { details: { status: 'fulfilled', code: 'x', type: 'y' } }), { id: 'r' } as never);
    expect(body).toMatchObject({ status: 409, code: 'order_not_actionable', type: 'about:blank' });
  });
});
