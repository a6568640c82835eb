import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { hasTokenHeader, isIpAllowed, readAuthorization, type TokenRead } from './access.js';
import { appendCall, redactBody } from './call-log.js';
import type { SandboxEvents } from './events.js';
import { decidePreWorkFailure, latencyFor, takeAfterCommit } from './faults.js';
import { errorEnvelope, errorHttpStatus, ProviderError, SUCCESS_CODE } from './provider-codes.js';
import type { OperationResult, ProviderRequest, ProviderService } from './provider-service.js';
import { rawMember } from './raw-json.js';
import type { SandboxState } from './state.js';
import { ENDPOINTS, type CallRecord, type CommittingEndpoint, type Endpoint } from './types.js';

/**
 * The provider's HTTP surface. Thin: access checks and faults in the order a real gateway in
 * front of the provider would apply them, then one ProviderService call, then the answer (or,
 * under fault injection, no answer at all after the work is done).
 */

export interface ProviderRoutesOptions {
  basePath: string;
  state: SandboxState;
  service: ProviderService;
  events: SandboxEvents;
  logger: Logger;
  now: () => number;
  random: () => number;
  allowedIps: readonly string[];
  maxCalls: number;
  signal: AbortSignal;
  /** Sockets held open by the `hang` fault; destroyed on close. */
  hanging: Set<Socket>;
}

/** Provider body as the content-type parser left it: the raw text and what JSON.parse made of it. */
interface ParsedBody {
  raw: string;
  json: Record<string, unknown>;
  malformed: boolean;
}

const METHOD_OF: Record<Endpoint, string> = {
  login: 'POST',
  'get-card-list': 'GET',
  'get-card-details-list': 'POST',
  'get-balance-details': 'POST',
  'initiate-card-request': 'POST',
  'confirm-order': 'POST',
};

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const;

function parseBody(raw: string, isJson: boolean): ParsedBody {
  if (!isJson || raw.trim() === '') return { raw, json: {}, malformed: false };
  try {
    const value: unknown = JSON.parse(raw);
    // A JSON array or scalar body has no fields: every required field is then "missing".
    const json = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    return { raw, json, malformed: false };
  } catch {
    return { raw, json: {}, malformed: true };
  }
}

export async function providerRoutes(app: FastifyInstance, opts: ProviderRoutesOptions): Promise<void> {
  // Bodies are read as text here (this plugin's context only) so the call log and the money check
  // see the bytes as sent. A body without a JSON content type is not parsed, as a typical web
  // framework would not: its fields are then missing.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, parseBody(String(body), true)));
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, parseBody(String(body), false)));

  for (const endpoint of ENDPOINTS) {
    app.route({
      method: [...ALL_METHODS],
      url: `${opts.basePath}/api-service/card/${endpoint}`,
      handler: (request, reply) => handle(opts, endpoint, request, reply),
    });
  }
}

async function handle(opts: ProviderRoutesOptions, endpoint: Endpoint, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { state, now } = opts;
  const started = performance.now();
  const body = (request.body as ParsedBody | undefined) ?? { raw: '', json: {}, malformed: false };
  const auth = readAuthorization(request.headers.authorization);
  let transactionId: string | undefined;

  const record = (httpStatus: number | null, providerCode: string | number | null, outcome: CallRecord['outcome']): void => {
    const call = appendCall(
      state,
      {
        at: now(),
        endpoint,
        method: request.method,
        path: request.url,
        ip: request.ip,
        httpStatus,
        providerCode,
        durationMs: Math.round(performance.now() - started),
        outcome,
        rawBody: redactBody(body.raw),
        authorization: auth.kind,
        tokenHeaderPresent: hasTokenHeader(request.headers.token),
        ...(transactionId ? { transactionId } : {}),
      },
      opts.maxCalls,
    );
    opts.logger.debug({ endpoint, httpStatus, providerCode, outcome, durationMs: call.durationMs }, 'sandbox provider call');
    opts.events.emit('call', call);
  };

  const sendError = (err: ProviderError, forcedStatus?: number): void => {
    const status = forcedStatus ?? errorHttpStatus(err.code, state.behaviour.errorHttpStatus);
    record(status, err.code, 'answered');
    void reply.code(status).send(errorEnvelope(err.code, err.detail));
  };

  if (!isIpAllowed(request.ip, opts.allowedIps)) {
    // Registration binds a merchant to IP addresses; an unregistered address is refused before
    // anything else, with 403 whatever errorHttpStatus says (it is the edge's answer, not the API's).
    return sendError(new ProviderError(10000, 'IP address not allowed'), 403);
  }
  if (request.method !== METHOD_OF[endpoint]) return sendError(new ProviderError(10003));

  try {
    const latency = latencyFor(state.faults, endpoint);
    if (latency > 0) await sleep(latency, undefined, { signal: opts.signal, ref: false });

    const decision = decidePreWorkFailure(state.faults, endpoint, opts.random);
    state.faults = decision.next;
    if (decision.fail) throw new ProviderError(10001, decision.reason === 'fail_next' ? 'injected failure' : undefined);

    if (endpoint !== 'login') authenticate(state, auth, request.headers.token, now());
    if (body.malformed) throw new ProviderError(10001, 'malformed JSON body');

    opts.service.sweep();
    const input: ProviderRequest = { body: body.json };
    if (endpoint === 'confirm-order') input.rawTotalAmount = rawMember(body.raw, 'total_amount');
    const result = await operate(opts.service, endpoint, input);
    transactionId = result.transactionId;

    if (endpoint === 'initiate-card-request' || endpoint === 'confirm-order') {
      if (await applyAfterCommit(opts, endpoint, request, reply, record)) return;
    }
    record(200, SUCCESS_CODE, 'answered');
    void reply.code(200).send(result.body);
  } catch (err) {
    if (err instanceof ProviderError) return sendError(err);
    if (opts.signal.aborted) return; // closing: the socket is going away anyway
    opts.logger.error({ err, endpoint }, 'sandbox provider call failed unexpectedly');
    sendError(new ProviderError(10001));
  }
}

/** Returns true when the answer was taken over (dropped, hung or replaced by an error). */
async function applyAfterCommit(
  opts: ProviderRoutesOptions,
  endpoint: CommittingEndpoint,
  request: FastifyRequest,
  reply: FastifyReply,
  record: (status: number | null, code: string | number | null, outcome: CallRecord['outcome']) => void,
): Promise<boolean> {
  const { fault, next } = takeAfterCommit(opts.state.faults, endpoint);
  opts.state.faults = next;
  if (!fault) return false;
  switch (fault.action) {
    case 'drop':
      record(null, null, 'dropped');
      reply.hijack();
      request.raw.socket.destroy();
      return true;
    case 'hang':
      record(null, null, 'hung');
      reply.hijack();
      opts.hanging.add(request.raw.socket);
      request.raw.socket.once('close', () => opts.hanging.delete(request.raw.socket));
      return true;
    case 'delay':
      await sleep(fault.delayMs ?? 0, undefined, { signal: opts.signal, ref: false });
      return false;
    case 'error': {
      const status = errorHttpStatus(10001, opts.state.behaviour.errorHttpStatus);
      record(status, 10001, 'answered');
      void reply.code(status).send(errorEnvelope(10001));
      return true;
    }
  }
}

function authenticate(state: SandboxState, auth: TokenRead, tokenHeader: string | string[] | undefined, now: number): void {
  // Section 5: the session token travels in Authorization and a Token header must be present.
  if (!hasTokenHeader(tokenHeader)) throw new ProviderError(10000, 'Token header missing');
  if (auth.kind === 'missing') throw new ProviderError(10000, 'Authorization header missing');
  if (!state.tokens.isValid(auth.token, now)) throw new ProviderError(10000);
}

function operate(service: ProviderService, endpoint: Endpoint, input: ProviderRequest): OperationResult | Promise<OperationResult> {
  switch (endpoint) {
    case 'login':
      return service.login(input);
    case 'get-card-list':
      return service.cardList();
    case 'get-card-details-list':
      return service.cardDetails(input);
    case 'get-balance-details':
      return service.balance(input);
    case 'initiate-card-request':
      return service.initiate(input);
    case 'confirm-order':
      return service.confirm(input);
  }
}
