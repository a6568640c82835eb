import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { Logger } from '../platform/logger.js';
import { SUCCESS_CODE } from './codes.js';
import { ENDPOINTS, endpointUrl, type UpstreamEndpoint } from './endpoints.js';
import { UpstreamError } from './errors.js';
import { interpretResponse } from './responses.js';
import { backoffDelayMs, classifyFailure, shouldRetry } from './retry-policy.js';
import type { TokenCache } from './token-cache.js';
import { send } from './transport.js';
import type { RetrySettings, UpstreamCallRecord } from './types.js';

export const LOGIN_TOKEN_PLACEHOLDER = 'none';

export interface CallRunnerDeps {
  baseUrl: string;
  dispatcher: Dispatcher;
  timeoutMs: number;
  retry: RetrySettings;
  logger: Logger;
  authorizationScheme: 'bare' | 'bearer';
  tokens: () => TokenCache;
  onCall: ((record: UpstreamCallRecord) => void) | undefined;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  isClosed: () => boolean;
}

export type RunCall = <S extends z.ZodType>(
  endpoint: UpstreamEndpoint,
  body: string | undefined,
  schema: S,
  onCall?: (record: UpstreamCallRecord) => void,
) => Promise<z.output<S>>;

/**
 * Runs one logical call: authentication, the single re-login on 10000, back-off retries where the
 * policy allows them, and one record + one debug line per HTTP attempt.
 */
export function createCallRunner(deps: CallRunnerDeps): RunCall {
  const log = deps.logger;

  function headersFor(token: string | undefined): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (token === undefined) {
      // Login's reference lists a `Token` header "with a fixed literal value" that the spec never
      // gives. No session exists yet, so a non-secret placeholder satisfies a server that only
      // checks the header is present, without inventing a credential.
      headers.token = LOGIN_TOKEN_PLACEHOLDER;
    } else {
      // Spec §5 names both headers and three different placements of the token. Sending the token
      // in both satisfies every reading: `Authorization` (bare or Bearer, see options) for the
      // reference pages and request-flow text, `Token` for the getting-started text and for
      // servers that only require that header to be present.
      headers.authorization = deps.authorizationScheme === 'bearer' ? `Bearer ${token}` : token;
      headers.token = token;
    }
    return headers;
  }

  function report(record: UpstreamCallRecord, onCall: ((record: UpstreamCallRecord) => void) | undefined): void {
    log.debug(record, 'upstream call');
    for (const hook of [deps.onCall, onCall]) {
      if (!hook) continue;
      try {
        hook(record);
      } catch (error) {
        // Metrics or a timeline must never break a purchase.
        log.warn({ endpoint: record.endpoint, err: error }, 'upstream onCall hook failed');
      }
    }
  }

  async function attemptOnce<S extends z.ZodType>(
    endpoint: UpstreamEndpoint,
    body: string | undefined,
    schema: S,
    token: string | undefined,
    attempt: number,
    onCall: ((record: UpstreamCallRecord) => void) | undefined,
  ): Promise<z.output<S>> {
    const spec = ENDPOINTS[endpoint];
    const started = performance.now();
    let httpStatus: number | undefined;
    try {
      const res = await send(
        deps.dispatcher,
        { endpoint, url: endpointUrl(deps.baseUrl, endpoint), method: spec.method, headers: headersFor(token), body },
        deps.timeoutMs,
      );
      httpStatus = res.status;
      const result = interpretResponse(endpoint, res.status, res.text, schema, (warning) =>
        // Accepted by its code (spec §7); worth knowing about, never worth losing the answer over.
        log.warn({ endpoint, httpStatus: res.status, warning }, 'upstream answer inconsistent; accepted by its code'),
      );
      report({ endpoint, attempt, ok: true, upstreamCode: SUCCESS_CODE, httpStatus, durationMs: elapsed(started), errorKind: undefined }, onCall);
      return result;
    } catch (error) {
      const e = error instanceof UpstreamError ? error : new UpstreamError({ kind: 'network', endpoint, requestSent: true, cause: error });
      if (e.salvage) {
        // Counts only: the salvaged card codes themselves must never reach a log.
        const salvaged = { salvagedTransactionId: e.salvage.transactionId !== undefined, salvagedCards: e.salvage.cards?.length ?? 0 };
        log.warn({ endpoint, errorKind: e.kind, upstreamCode: e.upstreamCode, ...salvaged }, 'upstream write answer refused; references salvaged for the caller');
      }
      report({
        endpoint,
        attempt,
        ok: false,
        upstreamCode: e.upstreamCode,
        httpStatus: e.httpStatus ?? httpStatus,
        durationMs: elapsed(started),
        errorKind: e.kind,
      }, onCall);
      throw e;
    }
  }

  return async function run(endpoint, body, schema, onCall) {
    const spec = ENDPOINTS[endpoint];
    let reauthenticated = false;
    let retries = 0;
    for (let attempt = 1; ; attempt++) {
      // Checked per attempt, so close() during a back-off also stops further retries.
      if (deps.isClosed()) throw new UpstreamError({ kind: 'network', endpoint, requestSent: false, detail: 'client closed' });
      // A failed login surfaces as the login's own error: the call itself was never sent.
      const token = spec.authenticated ? await deps.tokens().get(onCall) : undefined;
      try {
        return await attemptOnce(endpoint, body, schema, token, attempt, onCall);
      } catch (error) {
        if (!(error instanceof UpstreamError)) throw error;
        const policy = classifyFailure(error);
        if (policy.reauthenticate && token !== undefined && !reauthenticated) {
          // Once per call: a second 10000 right after a fresh login is not a stale token, and
          // looping would hammer login. Safe for writes too, see classifyFailure.
          reauthenticated = true;
          deps.tokens().invalidate(token);
          log.info({ endpoint }, 'upstream token rejected; re-authenticating');
          continue;
        }
        retries++;
        if (!shouldRetry(policy, retries, deps.retry.maxAttempts)) throw error;
        const delayMs = backoffDelayMs(retries, deps.retry, deps.random);
        log.info({ endpoint, retry: retries, delayMs, errorKind: error.kind, upstreamCode: error.upstreamCode }, 'upstream call retrying');
        await deps.sleep(delayMs);
      }
    }
  };
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
