import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/**
 * Property names whose value is a secret wherever it appears: credentials, card codes (they have
 * monetary value), the config's key material and the environment variables that carry it.
 */
const SECRET_KEYS = [
  'password',
  'privateKey',
  'private_key',
  'token',
  'secret',
  'apiKey',
  'api_key',
  'authorization',
  'card_code',
  'cardCode',
  'signingSecret',
  'webhookSecret',
  'cardCodeKeys',
  'databaseUrl',
  'redisUrl',
  'UPSTREAM_PRIVATE_KEY',
  'UPSTREAM_WEBHOOK_SECRET',
  'CALLBACK_SIGNING_SECRET',
  'CARD_CODE_KEYS',
  'DATABASE_URL',
  'REDIS_URL',
];

/** Arrays of cards: the provider's confirm body (`data`) and our own shapes (`cards`). */
const CARD_ARRAY_PATHS = ['data[*].card_code', 'data[*].cardCode', 'cards[*].code', 'cards[*].card_code', 'cards[*].cardCode'];

/**
 * Paths that may carry secrets anywhere a log call could put them. Redaction is the last line of
 * defence: code should not log these in the first place, and tests check the output.
 *
 * pino's redaction (fast-redact) compiles explicit paths and has no recursive wildcard, so each
 * secret name is listed at the top level and one and two levels down (`{ config: { upstream:
 * { privateKey } } }`, `err.cause.token`), and card arrays at the top level and one level down
 * (`{ body: { data: [{ card_code }] } }`). Deeper nesting is not covered: log flat objects.
 */
export const REDACT_PATHS = [
  ...['', '*.', '*.*.'].flatMap((prefix) => SECRET_KEYS.map((key) => `${prefix}${key}`)),
  ...['', '*.'].flatMap((prefix) => CARD_ARRAY_PATHS.map((path) => `${prefix}${path}`)),
  'req.headers.cookie',
  'headers["webhook-signature"]',
  'req.headers["webhook-signature"]',
  'res.headers["set-cookie"]',
];

export function loggerOptions(level: string, extra: Partial<LoggerOptions> = {}): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'gateway' },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...extra,
  };
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}
