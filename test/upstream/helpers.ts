import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/platform/logger.js';
import type { UpstreamCallRecord } from '../../src/upstream/index.js';

/** A pino logger at debug level whose output is kept in memory, to assert what is (not) logged. */
export function captureLogger(): { logger: Logger; lines: () => string[]; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = createLogger('debug', stream);
  const text = () => chunks.join('');
  return { logger, text, lines: () => text().split('\n').filter(Boolean) };
}

/** Retries that finish in milliseconds, with no jitter so counts are deterministic. */
export const FAST_RETRY = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, jitter: 'none' as const };

export function recordCalls(): { onCall: (r: UpstreamCallRecord) => void; records: UpstreamCallRecord[] } {
  const records: UpstreamCallRecord[] = [];
  return { onCall: (r) => records.push(r), records };
}

export const USERNAME = 'merchant-test';
export const PRIVATE_KEY = 'pk-test-SUPER-SECRET-0123456789';
