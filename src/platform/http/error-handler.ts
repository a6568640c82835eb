import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ERROR_STATUS, type ErrorCode } from '../../errors.js';
import { PROBLEM_CONTENT_TYPE, problem } from './problem.js';

/** Fastify's own error codes that are the client's fault, mapped to our stable codes. */
export const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
  FST_ERR_VALIDATION: 'validation_failed',
  FST_ERR_NOT_FOUND: 'route_not_found',
  FST_ERR_BAD_URL: 'bad_request',
  FST_ERR_MAX_PARAM_LENGTH: 'uri_too_long',
};

function statusCodeOf(error: FastifyError): number | undefined {
  const status = error.statusCode;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : undefined;
}

/** Turns any thrown value into a problem; 5xx never reveal internals. */
export function toProblem(error: unknown, request: FastifyRequest) {
  const requestId = String(request.id);
  if (error instanceof AppError) {
    const detail = error.status >= 500 ? 'The gateway could not complete the request.' : error.message;
    return { body: problem(error.status, error.code, detail, { ...error.details, requestId }), headers: error.headers };
  }
  const err = error as FastifyError & { validation?: { instancePath?: string; message?: string; params?: Record<string, unknown> }[] };
  if (err.validation) {
    const errors = err.validation.map((v) => {
      const missing = typeof v.params?.missingProperty === 'string' ? v.params.missingProperty : undefined;
      const path = `${err.validationContext ?? 'body'}${v.instancePath ?? ''}${missing ? `/${missing}` : ''}`;
      return { path, message: v.message ?? 'is invalid' };
    });
    return { body: problem(400, 'validation_failed', 'The request is not valid.', { errors, requestId }) };
  }
  if (err instanceof SyntaxError && statusCodeOf(err) === 400) {
    return { body: problem(400, 'invalid_json', 'The request body is not valid JSON.', { requestId }) };
  }
  const mapped = err.code ? FASTIFY_CODES[err.code] : undefined;
  const status = statusCodeOf(err);
  if (mapped) {
    return { body: problem(ERROR_STATUS[mapped], mapped, err.message, { requestId }) };
  }
  if (status === 429) {
    return { body: problem(429, 'rate_limited', 'Too many requests for this API key; retry after the time in Retry-After.', { requestId }) };
  }
  if (status !== undefined && status < 500) {
    return { body: problem(status, status === 404 ? 'not_found' : status === 405 ? 'method_not_allowed' : 'bad_request', err.message, { requestId }) };
  }
  return { body: problem(500, 'internal_error', 'The gateway could not complete the request.', { requestId }) };
}

/**
 * Every error answer carries the request id (as does its problem body), so a storefront can quote
 * it; successful answers do not: on a cached catalog read one more header costs more than the
 * read itself, and a client that wants correlation sends its own x-request-id, which the gateway
 * then uses as the id in its logs.
 */
export const REQUEST_ID_HEADER = 'x-request-id';

async function errorHandler(app: FastifyInstance): Promise<void> {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { body, headers } = toProblem(error, request);
    if (body.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    } else {
      request.log.info({ code: body.code, status: body.status }, 'request rejected');
    }
    if (headers) void reply.headers(headers);
    return reply.status(body.status).header(REQUEST_ID_HEADER, String(request.id)).type(PROBLEM_CONTENT_TYPE).send(body);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const body = problem(404, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]}.`, { requestId: String(request.id) });
    return reply.status(404).header(REQUEST_ID_HEADER, String(request.id)).type(PROBLEM_CONTENT_TYPE).send(body);
  });
}

export default fp(errorHandler, { name: 'error-handler' });
