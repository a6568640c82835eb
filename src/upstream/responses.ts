import type { z } from 'zod';
import { SUCCESS_CODE } from './codes.js';
import { ENDPOINTS, type UpstreamEndpoint } from './endpoints.js';
import { UpstreamError } from './errors.js';
import { quoteIdentifierLiterals, salvageFromJson, salvageFromText, type Salvage } from './salvage.js';
import { describeIssues, envelopeSchema } from './schemas.js';

/** Oddities of an accepted answer worth a warning (never containing response content). */
export type ResponseWarning = 'success code with status false';

/**
 * Turns one HTTP answer into the endpoint's result or a typed error. The provider states no HTTP
 * statuses except login's 200, so the status is never trusted on its own: an error envelope is
 * honoured with any status, and a valid success envelope is accepted with any status (refusing a
 * confirm answer that carries the cards because of an odd status would lose them). Only an
 * answer without a readable envelope falls back to the status, which then reaches the retry
 * policy as a `malformed` failure (a 502 HTML page from a proxy, say).
 *
 * The code decides (spec §7: branch on code): 11111 is a success whatever `status` says (a
 * disagreement is reported through `onWarning`), any other code is a provider error even with
 * `status: true`. On initiate/confirm, every refusal carries whatever transaction_id and card
 * codes the answer held (`UpstreamError.salvage`), because those cannot be fetched again.
 */
export function interpretResponse<S extends z.ZodType>(
  endpoint: UpstreamEndpoint,
  httpStatus: number,
  text: string,
  schema: S,
  onWarning?: (warning: ResponseWarning) => void,
): z.output<S> {
  const writes = ENDPOINTS[endpoint].writes;
  const malformed = (detail: string, salvage: Salvage | undefined, upstreamCode?: number) =>
    new UpstreamError({ kind: 'malformed', endpoint, httpStatus, upstreamCode, requestSent: true, detail, salvage });

  let json: unknown;
  try {
    // Integer literals of transaction_id / card_code / card_number become strings first, so that
    // long numeric ids and codes keep every digit (JSON.parse would round them).
    json = JSON.parse(quoteIdentifierLiterals(text));
  } catch {
    // Never include the text: on confirm-order it could hold card codes.
    throw malformed(text.trim() === '' ? 'empty body' : 'body is not JSON', writes ? salvageFromText(text) : undefined);
  }
  const salvage = writes ? salvageFromJson(json) : undefined;

  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) throw malformed(`envelope ${describeIssues(envelope.error)}`, salvage);
  const { code, status, error } = envelope.data;

  if (code !== SUCCESS_CODE) {
    throw new UpstreamError({
      kind: 'provider',
      endpoint,
      upstreamCode: code,
      httpStatus,
      requestSent: true,
      providerMessage: error,
      salvage,
    });
  }
  if (status === false) onWarning?.('success code with status false');

  const result = schema.safeParse(json);
  if (!result.success) throw malformed(describeIssues(result.error), salvage, code);
  return result.data;
}
