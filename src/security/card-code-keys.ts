import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseCardCodeKeys, type CardCodeKey } from '../config/env.js';
import type { Logger } from '../platform/logger.js';

/**
 * The keys that encrypt card codes at rest. In production they come from CARD_CODE_KEYS (the
 * config refuses to start against a real provider without them). With the built-in sandbox, a
 * development key is generated once into a local file (mode 0600) so restarts can still read
 * what earlier runs stored; that file never holds real codes' keys.
 */
export async function loadCardCodeKeys(configured: CardCodeKey[] | undefined, devKeyFile: string, log: Logger): Promise<CardCodeKey[]> {
  if (configured) return configured;
  const file = path.resolve(devKeyFile);
  try {
    const parsed = parseCardCodeKeys((await readFile(file, 'utf8')).trim());
    if (!parsed.keys) throw new Error(`${file}: ${parsed.problem ?? 'unreadable'}`);
    return parsed.keys;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(path.dirname(file), { recursive: true });
  const line = `dev1:${randomBytes(32).toString('base64')}`;
  await writeFile(file, `${line}\n`, { mode: 0o600, flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err; // another process created it first: use theirs
  });
  await chmod(file, 0o600);
  log.warn({ file }, 'CARD_CODE_KEYS not set: using a generated development key (never use this with a real provider)');
  return loadCardCodeKeys(undefined, devKeyFile, log);
}
