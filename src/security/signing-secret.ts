import path from 'node:path';
import type { Logger } from '../platform/logger.js';
import { decodeSecret, generateSecret } from '../platform/standard-webhooks.js';
import { readOrCreateDevSecret } from './dev-secret-file.js';

/**
 * A Standard Webhooks signing secret: the configured one, or (with the built-in sandbox and none
 * configured) a development secret generated once into a local file. Used for storefront
 * callbacks (CALLBACK_SIGNING_SECRET) and for the sandbox's webhooks to the gateway
 * (UPSTREAM_WEBHOOK_SECRET).
 */
export async function loadSigningSecret(configured: string | undefined, devFile: string, log: Logger, variable: string): Promise<string> {
  if (configured) return configured;
  const { value, created } = await readOrCreateDevSecret(devFile, generateSecret);
  decodeSecret(value);
  if (created) log.warn({ file: path.resolve(devFile) }, `${variable} not set: generated a development secret`);
  return value;
}
