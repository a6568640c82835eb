/**
 * What the gateway does with a provider event is decided by its topic, not by the provider's
 * spelling of the type: a provider that documents another format gets a new TopicMapper, and the
 * handlers stay as they are.
 */
export const TOPICS = ['order_status', 'order_created', 'order_final', 'busy_on', 'busy_off'] as const;

export type Topic = (typeof TOPICS)[number];

export function isTopic(value: unknown): value is Topic {
  return typeof value === 'string' && (TOPICS as readonly string[]).includes(value);
}

/** One event as the provider described it, before any meaning is given to it. */
export interface ProviderEvent {
  /** The provider's type as sent ('' when the body names none). */
  type: string;
  /** When the provider says it happened, if it said (and it parses). */
  occurredAt?: Date;
  data: unknown;
}

export interface TopicMapper {
  /** Our topic for a provider type; undefined = unknown (stored, flagged, not processed). */
  topicOf(type: string): Topic | undefined;
  /** The parts of a parsed body every topic needs. Never throws: odd bodies yield type ''. */
  eventOf(body: unknown): ProviderEvent;
}

/** The Standard Webhooks body of upstream-webhooks.md: `{ type, timestamp, data }`. */
export const STANDARD_TOPICS: Readonly<Record<string, Topic>> = {
  'order.status_updated': 'order_status',
  'order.created': 'order_created',
  'order.finalized': 'order_final',
  'busy_mode.activated': 'busy_on',
  'busy_mode.revoked': 'busy_off',
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createStandardTopicMapper(types: Readonly<Record<string, Topic>> = STANDARD_TOPICS): TopicMapper {
  return {
    topicOf: (type) => (Object.hasOwn(types, type) ? types[type] : undefined),
    eventOf(body) {
      if (!isObject(body)) return { type: '', data: body };
      const type = typeof body.type === 'string' ? body.type : '';
      const ts = typeof body.timestamp === 'string' ? new Date(body.timestamp) : undefined;
      // Only a time PostgreSQL can store (years 1-9999); anything else is treated as not stated.
      const occurredAt = ts && !Number.isNaN(ts.getTime()) && ts.getTime() >= Date.UTC(1, 0, 1) && ts.getTime() < Date.UTC(10000, 0, 1) ? ts : undefined;
      return { type, ...(occurredAt ? { occurredAt } : {}), data: body.data ?? {} };
    },
  };
}
