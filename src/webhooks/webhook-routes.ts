import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../errors.js';
import type { PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { QueueRegistry } from '../platform/queues.js';
import { createSourceAllowList } from './source-allowlist.js';
import { stripCardCodes } from './strip-card-codes.js';
import { unstorable } from '../platform/http/input-guards.js';
import type { TopicMapper } from './topics.js';
import type { WebhookVerifier } from './verifier.js';
import { createInboxWriter, enqueueNewWebhookEvent } from './webhook-inbox.js';

export interface WebhookRoutesOptions {
  prisma: Pick<PrismaClient, '$queryRaw'>;
  queues: QueueRegistry;
  verifier: WebhookVerifier;
  mapper: TopicMapper;
  maxBodyBytes: number;
  /** Addresses/CIDR ranges allowed to deliver; undefined = any source. */
  allowedIps?: readonly string[] | undefined;
  log: Logger;
}

const problem = { $ref: 'ProblemDetails#' };

const REASONS: Record<string, string> = {
  missing_headers: 'The webhook-id, webhook-timestamp and webhook-signature headers are required.',
  bad_timestamp: 'webhook-timestamp must be Unix seconds.',
  stale_timestamp: 'webhook-timestamp is outside the accepted window.',
  bad_signature: 'No webhook-signature matches the body.',
};

/**
 * POST /webhooks/upstream: the provider's deliveries. Only the acknowledgement happens here
 * (source check, size limit, signature over the raw bytes, one INSERT, one queue add); the work
 * is the webhook-inbox worker's, so the provider gets its 2xx within milliseconds.
 * Register it encapsulated (plain `app.register`): its raw-body parser must not leak to the
 * app's other routes, which keep the JSON parser.
 */
export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (app, opts) => {
  const { prisma, queues, verifier, mapper, maxBodyBytes, log } = opts;
  const allowed = opts.allowedIps ? createSourceAllowList(opts.allowedIps) : undefined;
  const inbox = createInboxWriter(prisma);

  // Signatures cover the bytes as sent, so the body must reach the handler unparsed. Any content
  // type is taken: what decides is the signature, and a provider labelling its JSON oddly
  // (text/plain, a charset) must not make us drop its events.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_request, body, done) => done(null, body));

  // Before the body is read: a source not on the list costs us no bytes.
  const checkSource: onRequestAsyncHookHandler = async (request) => {
    if (allowed && !allowed(request.ip)) {
      throw new AppError('forbidden', 'This address may not deliver provider webhooks.');
    }
  };

  app.post(
    '/webhooks/upstream',
    {
      bodyLimit: maxBodyBytes,
      onRequest: checkSource,
      schema: {
        tags: ['webhooks'],
        summary: 'Provider webhook receiver',
        description:
          'Standard Webhooks deliveries from the provider (webhook-id, webhook-timestamp, webhook-signature over the raw body). ' +
          'Verified events are stored once per webhook-id and processed in the background; unknown types are stored, flagged and acknowledged.',
        response: {
          204: Type.Null({ description: 'Stored (or already stored: a redelivery).' }),
          400: problem,
          401: problem,
          403: problem,
          413: problem,
        },
      },
    },
    async (request, reply) => {
      const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const verdict = verifier.verify({ headers: request.headers, rawBody, sourceIp: request.ip });
      if (!verdict.ok) {
        // Nothing unverified goes further than this line: not stored, not parsed, not logged.
        throw new AppError('unauthorized', REASONS[verdict.reason] ?? 'The webhook could not be verified.', { details: { reason: verdict.reason } });
      }
      let body: unknown;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        throw new AppError('invalid_json', 'The webhook body is not valid JSON.');
      }
      const event = mapper.eventOf(body);
      const topic = mapper.topicOf(event.type);
      // PostgreSQL's jsonb refuses NUL characters and unpaired surrogates, and deep nesting is
      // an attack on whatever walks it: refuse them here, for this delivery alone.
      const problem = unstorable(body);
      if (problem) throw new AppError('bad_request', `The webhook body ${problem}.`);
      const { value: payload, removed } = stripCardCodes(body);
      const write = await inbox.write({
        id: verdict.id,
        type: event.type,
        topic,
        occurredAt: event.occurredAt,
        payload,
        flagged: topic === undefined || removed > 0,
        sourceIp: request.ip,
      });
      if (write.inserted && (topic === undefined || removed > 0)) {
        log.warn({ webhookId: verdict.id, type: event.type.slice(0, 100), unknownType: topic === undefined, removedCodeFields: removed }, 'provider webhook flagged');
      }
      // A repeat of an event still waiting is queued again: harmless (same job id) and it heals a
      // first delivery whose enqueue failed after its row was stored.
      if (write.status === 'received' && write.topic !== null) {
        try {
          await enqueueNewWebhookEvent(queues, verdict.id);
        } catch (err) {
          // The event is stored, which is what the provider needs to know; the reconciler
          // (requeueUnprocessedWebhooks) queues it once Redis is back.
          log.warn({ webhookId: verdict.id, err: { message: (err as Error).message } }, 'provider webhook stored but not queued');
        }
      }
      return reply.code(204).send(null);
    },
  );
};
