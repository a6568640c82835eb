import { AppError } from '../errors.js';
import type { Prisma, PrismaClient } from '../platform/db.js';
import type { QueueRegistry } from '../platform/queues.js';
import { stripCardCodes } from './strip-card-codes.js';
import type { TopicMapper } from './topics.js';
import { enqueueWebhookEvents } from './webhook-inbox.js';
import type { WebhookEventRow } from './webhook-worker.js';

export const WEBHOOK_STATUSES = ['received', 'processed', 'ignored', 'failed'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export interface WebhookEventFilter {
  status?: WebhookStatus;
  type?: string;
  orderId?: string;
  /** receivedAt >= from */
  from?: Date;
  /** receivedAt < to */
  to?: Date;
  limit?: number;
  /** From a previous page's nextCursor. */
  cursor?: string;
}

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 200;

/** Opaque keyset cursor: the last row's (receivedAt, id), newest first. */
function encodeCursor(row: Pick<WebhookEventRow, 'receivedAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([row.receivedAt.toISOString(), row.id])).toString('base64url');
}

function decodeCursor(cursor: string): { receivedAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const receivedAt = new Date(String(at));
    if (typeof id === 'string' && !Number.isNaN(receivedAt.getTime())) return { receivedAt, id };
  } catch {
    // fall through
  }
  throw new AppError('bad_request', 'cursor is not one this API returned.');
}

/** Stored provider events, newest first, one page at a time. */
export async function listWebhookEvents(
  prisma: Pick<PrismaClient, 'webhookEvent'>,
  filter: WebhookEventFilter = {},
): Promise<{ data: WebhookEventRow[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(filter.limit ?? DEFAULT_LIST_LIMIT, 1), MAX_LIST_LIMIT);
  const where: Prisma.WebhookEventWhereInput = {
    ...(filter.status ? { status: filter.status } : {}),
    ...(filter.type ? { type: filter.type } : {}),
    ...(filter.orderId ? { orderId: filter.orderId } : {}),
    ...(filter.from || filter.to ? { receivedAt: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lt: filter.to } : {}) } } : {}),
  };
  if (filter.cursor) {
    const after = decodeCursor(filter.cursor);
    where.AND = [{ OR: [{ receivedAt: { lt: after.receivedAt } }, { receivedAt: after.receivedAt, id: { lt: after.id } }] }];
  }
  const rows = await prisma.webhookEvent.findMany({ where, orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }], take: limit + 1 });
  const data = rows.slice(0, limit);
  return { data, nextCursor: rows.length > limit ? encodeCursor(data[data.length - 1]!) : null };
}

/**
 * Processes a stored event again: back to `received`, and queued. With a mapper, the topic is
 * worked out again from the type, so an event stored as unknown can be handled once a newer
 * mapping knows it. Handlers are idempotent, so replaying a processed event is safe.
 */
export async function replayWebhookEvent(
  prisma: Pick<PrismaClient, 'webhookEvent'>,
  queues: QueueRegistry,
  id: string,
  mapper?: Pick<TopicMapper, 'topicOf'>,
): Promise<WebhookEventRow> {
  const row = await prisma.webhookEvent.findUnique({ where: { id } });
  if (!row) throw new AppError('webhook_event_not_found', `No provider webhook event ${id}.`);
  const topic = mapper ? (mapper.topicOf(row.type) ?? null) : row.topic;
  if (topic === null) throw new AppError('conflict', `No handler knows events of type "${row.type}"; nothing would process it.`);
  const updated = await prisma.webhookEvent.update({ where: { id }, data: { status: 'received', topic, lastError: null, processedAt: null } });
  await enqueueWebhookEvents(queues, [id]);
  return updated;
}

/** What support sees of an event: the stored payload (never a code: stripped again on the way out). */
export function webhookEventView(row: WebhookEventRow) {
  return {
    id: row.id,
    type: row.type,
    topic: row.topic,
    status: row.status,
    flagged: row.flagged,
    deliveries: row.deliveries,
    attempts: row.attempts,
    lastError: row.lastError,
    orderId: row.orderId,
    sourceIp: row.sourceIp,
    occurredAt: row.occurredAt?.toISOString() ?? null,
    receivedAt: row.receivedAt.toISOString(),
    processedAt: row.processedAt?.toISOString() ?? null,
    payload: stripCardCodes(row.payload).value,
  };
}
