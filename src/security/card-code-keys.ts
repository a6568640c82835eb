import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { parseCardCodeKeys, type CardCodeKey } from '../config/env.js';
import type { Logger } from '../platform/logger.js';
import { readOrCreateDevSecret } from './dev-secret-file.js';

/**
 * The keys that encrypt card codes at rest. In production they come from CARD_CODE_KEYS (the
 * config refuses to start against a real provider without them). With the built-in sandbox, a
 * development key is generated once into a local file (mode 0600) so restarts can still read
 * what earlier runs stored; that file never holds real codes' keys.
 */
export async function loadCardCodeKeys(configured: CardCodeKey[] | undefined, devKeyFile: string, log: Logger): Promise<CardCodeKey[]> {
  if (configured) return configured;
  const { value, created } = await readOrCreateDevSecret(devKeyFile, () => `dev1:${randomBytes(32).toString('base64')}`);
  const parsed = parseCardCodeKeys(value);
  if (!parsed.keys) throw new Error(`${path.resolve(devKeyFile)}: ${parsed.problem ?? 'unreadable'}`);
  if (created) log.warn({ file: path.resolve(devKeyFile) }, 'CARD_CODE_KEYS not set: generated a development key (never use this with a real provider)');
  return parsed.keys;
}
