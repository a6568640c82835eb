import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { withTimeout } from '../with-timeout.js';
import { REQUEST_ID_HEADER } from './error-handler.js';

export interface ReadinessCheck {
  name: string;
  /**
   * Resolves with optional (public) details when healthy; throws when not. The error's message
   * is logged, never answered: /readyz is unauthenticated, and messages name hosts and ports.
   * Throw a ReadinessFailure to answer a specific public reason instead of "unavailable".
   */
  check(): Promise<Record<string, unknown> | void>;
  /** A non-critical check reports but never makes the instance unready (e.g. catalog age). */
  critical?: boolean;
}

/** A failed check whose `reason` (a short snake_case code) and details are safe to show anyone. */
export class ReadinessFailure extends Error {
  constructor(
    readonly reason: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(reason);
    this.name = 'ReadinessFailure';
  }
}

class ReadinessTimeout extends Error {}

const CheckResult = Type.Object({
  ok: Type.Boolean(),
  ms: Type.Integer(),
  error: Type.Optional(Type.String({ description: '"unavailable", "timeout" or a check-specific code such as "stale"' })),
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const READY_TIMEOUT_MS = 2_000;


/** What /readyz may say about a failure: fixed words, never the error's own message. */
function publicFailure(err: unknown): { error: string; details?: Record<string, unknown> } {
  if (err instanceof ReadinessTimeout) return { error: 'timeout' };
  if (err instanceof ReadinessFailure && /^[a-z][a-z0-9_]{0,39}$/.test(err.reason)) {
    return { error: err.reason, ...(err.details ? { details: err.details } : {}) };
  }
  return { error: 'unavailable' };
}

/** `/healthz`: the process is up. `/readyz`: its dependencies answer, so it should get traffic. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ checks: ReadinessCheck[] }> = async (app, { checks }) => {
  // Probes arrive every few seconds from orchestrators; keep them out of the info log.
  app.get(
    '/healthz',
    {
      logLevel: 'warn',
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process is up',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      schema: {
        tags: ['operations'],
        summary: 'Readiness: database, Redis and other dependencies',
        response: {
          200: Type.Object({ status: Type.Literal('ready'), checks: Type.Record(Type.String(), CheckResult) }),
          503: Type.Object({ status: Type.Literal('unready'), checks: Type.Record(Type.String(), CheckResult) }),
        },
      },
    },
    async (request, reply) => {
      const results = await Promise.all(
        checks.map(async (c) => {
          const started = performance.now();
          try {
            const details = await withTimeout(c.check(), READY_TIMEOUT_MS, () => new ReadinessTimeout(`no answer within ${READY_TIMEOUT_MS} ms`));
            return [c.name, { ok: true, ms: Math.round(performance.now() - started), ...(details ? { details } : {}) }, c] as const;
          } catch (err) {
            request.log.warn({ check: c.name, critical: c.critical !== false, err: { message: (err as Error).message } }, 'readiness check failed');
            return [c.name, { ok: false, ms: Math.round(performance.now() - started), ...publicFailure(err) }, c] as const;
          }
        }),
      );
      const ready = results.every(([, r, c]) => r.ok || c.critical === false);
      const body = Object.fromEntries(results.map(([name, r]) => [name, r]));
      if (ready) return reply.status(200).send({ status: 'ready' as const, checks: body });
      return reply.status(503).header(REQUEST_ID_HEADER, String(request.id)).send({ status: 'unready' as const, checks: body });
    },
  );
};
