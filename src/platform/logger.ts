import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths that may carry secrets anywhere a log call could put them. Redaction is the last line of
 * defence: code should not log these in the first place, and tests check the output.
 */
export const REDACT_PATHS = [
  'password',
  'privateKey',
  'private_key',
  'token',
  'secret',
  'apiKey',
  'authorization',
  'card_code',
  'cardCode',
  'cards[*].code',
  'cards[*].card_code',
  '*.password',
  '*.privateKey',
  '*.private_key',
  '*.token',
  '*.secret',
  '*.apiKey',
  '*.authorization',
  '*.card_code',
  '*.cardCode',
  '*.cards[*].code',
  '*.cards[*].card_code',
  'req.headers.authorization',
  'req.headers.token',
  'req.headers.cookie',
  'headers.authorization',
  'headers.token',
  'headers["webhook-signature"]',
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
