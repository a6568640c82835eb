import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config/index.js';
import type { PrismaClient } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { QueueRegistry } from '../platform/queues.js';
import { createStandardTopicMapper, type TopicMapper } from './topics.js';
import { createStandardWebhooksVerifier, type WebhookVerifier } from './verifier.js';
import { webhookAdminRoutes } from './webhook-admin-routes.js';
import { webhookRoutes } from './webhook-routes.js';

export { TOPICS, STANDARD_TOPICS, createStandardTopicMapper, isTopic, type ProviderEvent, type Topic, type TopicMapper } from './topics.js';
export { createStandardWebhooksVerifier, type VerifyInput, type VerifyOutcome, type WebhookVerifier } from './verifier.js';
export { createSourceAllowList } from './source-allowlist.js';
export { stripCardCodes } from './strip-card-codes.js';
export { WEBHOOK_JOB_ATTEMPTS, createInboxWriter, enqueueWebhookEvents, recordWebhookEvent, recordWebhookEvents, webhookJobId, type InboxEntry, type InboxWrite, type InboxWriter } from './webhook-inbox.js';
export { webhookRoutes, type WebhookRoutesOptions } from './webhook-routes.js';
export { processWebhookEvent, requeueUnprocessedWebhooks, startWebhookWorker, type WebhookEventRow, type WebhookHandlerResult, type WebhookHandlers, type WebhookWorkerDeps } from './webhook-worker.js';
export { listWebhookEvents, replayWebhookEvent, webhookEventView, type WebhookEventFilter, type WebhookStatus } from './webhook-admin.js';
export { webhookAdminRoutes, WebhookEventSchema } from './webhook-admin-routes.js';

export interface WebhookPluginOptions {
  prisma: PrismaClient;
  queues: QueueRegistry;
  log: Logger;
  /** `whsec_…`, current first: config.webhooks.secrets, or the generated dev secret. */
  secrets: readonly string[];
  config: Pick<Config['webhooks'], 'allowedIps' | 'maxBodyBytes' | 'toleranceSeconds'>;
  /** Another provider format: its own verifier and mapper (default: Standard Webhooks). */
  verifier?: WebhookVerifier;
  mapper?: TopicMapper;
}

/**
 * The receiver (POST /webhooks/upstream) and the support routes over the inbox. Register it with
 * plain `app.register` (not fastify-plugin): the receiver's raw-body parser stays inside it.
 */
export const webhookPlugin: FastifyPluginAsync<WebhookPluginOptions> = async (app, opts) => {
  const mapper = opts.mapper ?? createStandardTopicMapper();
  let verifier = opts.verifier;
  if (!verifier && opts.secrets.length === 0) {
    // A provider without a configured secret: every delivery is refused (401), none is trusted.
    opts.log.warn('no UPSTREAM_WEBHOOK_SECRET: provider webhooks are refused until one is set');
    verifier = { verify: () => ({ ok: false, reason: 'not_configured' }) };
  }
  verifier ??= createStandardWebhooksVerifier({ secrets: opts.secrets, toleranceSeconds: opts.config.toleranceSeconds });
  await app.register(webhookRoutes, {
    prisma: opts.prisma,
    queues: opts.queues,
    verifier,
    mapper,
    maxBodyBytes: opts.config.maxBodyBytes,
    allowedIps: opts.config.allowedIps,
    log: opts.log.child({ component: 'webhooks' }),
  });
  await app.register(webhookAdminRoutes, { prisma: opts.prisma, queues: opts.queues, mapper });
};
