/** Where the tests find PostgreSQL and Redis: the machine's own, never mocks. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/gateway_test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A short random suffix so each test owns its rows, queue prefixes and Redis keys. */
export function uniqueId(label = 't'): string {
  return `${label}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}
