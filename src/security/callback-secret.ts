import path from 'node:path';
import type { Logger } from '../platform/logger.js';
import { decodeSecret, generateSecret } from '../platform/standard-webhooks.js';
import { readOrCreateDevSecret } from './dev-secret-file.js';

/**
 * The secret that signs storefront callbacks (Standard Webhooks). CALLBACK_SIGNING_SECRET in
 * production; with the built-in sandbox and none set, a development secret kept in a local file.
 */
export async function loadCallbackSecret(configured: string | undefined, devFile: string, log: Logger): Promise<string> {
  if (configured) return configured;
  const { value, created } = await readOrCreateDevSecret(devFile, generateSecret);
  decodeSecret(value);
  if (created) log.warn({ file: path.resolve(devFile) }, 'CALLBACK_SIGNING_SECRET not set: generated a development secret for storefront callbacks');
  return value;
}
