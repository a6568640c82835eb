import { COMMITTING_ENDPOINTS, ENDPOINTS } from './types.js';

/**
 * JSON schemas of the control API's inputs. Unknown endpoint names and out-of-range values are
 * refused (400) rather than silently ignored: a fault that never fires makes a test pass for the
 * wrong reason.
 */

const perEndpoint = (value: object) => ({
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(ENDPOINTS.map((e) => [e, value])),
});

const ms = { type: 'integer', minimum: 0, maximum: 600_000 };

export const faultsBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    latencyMs: ms,
    endpointLatencyMs: perEndpoint(ms),
    errorRate: perEndpoint({ type: 'number', minimum: 0, maximum: 1 }),
    failNext: perEndpoint({ type: 'integer', minimum: 0 }),
    afterCommit: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(
        COMMITTING_ENDPOINTS.map((e) => [
          e,
          {
            type: 'object',
            additionalProperties: false,
            required: ['action'],
            properties: { action: { enum: ['drop', 'hang', 'delay', 'error'] }, delayMs: ms, times: { type: 'integer', minimum: 1 } },
          },
        ]),
      ),
    },
  },
} as const;

export const behaviourBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    errorHttpStatus: { enum: [200, 'mapped'] },
    amountMismatch: { enum: ['reject', 'accept'] },
    invalidTransactionCode: { enum: [10001, 10002] },
    reconfirm: { enum: ['fail', 'same-cards'] },
    misspelledQuantity: { enum: ['reject', 'ignore'] },
    repeatedTransactionNumber: { enum: ['new-reservation', 'return-existing'] },
    loginRevokesPreviousTokens: { type: 'boolean' },
    tokenTtlMs: { type: 'integer', minimum: 1 },
    reservationTtlMs: { type: 'integer', minimum: 1 },
  },
} as const;

export const busyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['active'],
  properties: {
    active: { type: 'boolean' },
    reason: { type: 'string', maxLength: 500 },
    until: { type: 'string', format: 'date-time' },
    mode: { enum: ['reject', 'delay'] },
    delayMs: ms,
  },
} as const;

export const stockBody = {
  type: 'object',
  additionalProperties: false,
  required: ['stock'],
  properties: { stock: { type: 'integer', minimum: 0 } },
} as const;

export const webhookConfigBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url: { type: 'string', minLength: 1 },
    secrets: { type: 'array', items: { type: 'string', minLength: 1 } },
    retryDelaysMs: { type: 'array', maxItems: 20, items: ms },
    timeoutMs: { type: 'integer', minimum: 1, maximum: 600_000 },
    hold: { type: 'boolean' },
  },
} as const;

export const duplicateBody = {
  type: 'object',
  additionalProperties: false,
  properties: { count: { type: 'integer', minimum: 1, maximum: 50 } },
} as const;

export const releaseBody = {
  type: 'object',
  additionalProperties: false,
  properties: { order: { enum: ['fifo', 'reverse', 'shuffle'] } },
} as const;

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1 } },
} as const;
