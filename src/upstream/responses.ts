import type { z } from 'zod';
import { SUCCESS_CODE } from './codes.js';
import type { UpstreamEndpoint } from './endpoints.js';
import { UpstreamError } from './errors.js';
import { describeIssues, envelopeSchema } from './schemas.js';

/**
 * Turns one HTTP answer into the endpoint's result or a typed error. The provider states no HTTP
 * statuses except login's 200, so the status is never trusted on its own: an error envelope is
 * honoured with any status, and a valid success envelope is accepted with any status (refusing a
 * confirm answer that carries the cards because of an odd status would lose them). Only an
 * answer without a readable envelope falls back to the status, which then reaches the retry
 * policy as a `malformed` failure (a 502 HTML page from a proxy, say).
 */
export function interpretResponse<S extends z.ZodType>(
  endpoint: UpstreamEndpoint,
  httpStatus: number,
  text: string,
  schema: S,
): z.output<S> {
  const malformed = (detail: string, upstreamCode?: number) =>
    new UpstreamError({ kind: 'malformed', endpoint, httpStatus, upstreamCode, requestSent: true, detail });

  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Never include the text: on confirm-order it could hold card codes.
    throw malformed(text.trim() === '' ? 'empty body' : 'body is not JSON');
  }

  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) throw malformed(`envelope ${describeIssues(envelope.error)}`);
  const { code, status, error } = envelope.data;

  // Branch on the code's value whatever its JSON type; `status` is only a consistency check.
  if (code !== SUCCESS_CODE) {
    throw new UpstreamError({
      kind: 'provider',
      endpoint,
      upstreamCode: code,
      httpStatus,
      requestSent: true,
      providerMessage: error,
    });
  }
  if (status === false) throw malformed('success code with status false', code);

  const result = schema.safeParse(json);
  if (!result.success) throw malformed(describeIssues(result.error), code);
  return result.data;
}
