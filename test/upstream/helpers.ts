import { Writable } from 'node:stream';
import { MockAgent } from 'undici';
import { expect } from 'vitest';
import { createLogger, type Logger } from '../../src/platform/logger.js';
import {
  createUpstreamClient,
  UpstreamError,
  type UpstreamCallRecord,
  type UpstreamClient,
  type UpstreamClientOptions,
} from '../../src/upstream/index.js';

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

/** The options every test client starts from: the test credentials, `logger` and a 2 s timeout. */
export function clientOptions(baseUrl: string, logger: Logger, timeoutMs = 2_000): UpstreamClientOptions {
  return { baseUrl, username: USERNAME, privateKey: PRIVATE_KEY, timeoutMs, logger };
}

/** Awaits a promise that must reject with an UpstreamError, and answers that error. */
export async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

export interface MockAgentClient {
  agent: MockAgent;
  client: UpstreamClient;
  calls: ReturnType<typeof recordCalls>;
  log: ReturnType<typeof captureLogger>;
}

/**
 * A client on undici's MockAgent (network connections refused), with fast retries, its call
 * records and its log. The caller closes `client` and `agent`.
 */
export function mockAgentClient(baseUrl: string): MockAgentClient {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const calls = recordCalls();
  const log = captureLogger();
  const client = createUpstreamClient({ ...clientOptions(baseUrl, log.logger), dispatcher: agent, retry: FAST_RETRY, onCall: calls.onCall });
  return { agent, client, calls, log };
}
