import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Reads a development secret from `file`, creating it with `generate()` (mode 0600) the first
 * time. Used only when the corresponding variable is unset and the built-in sandbox is in use,
 * so restarts keep reading what earlier runs wrote. Concurrent first starts agree on one value.
 */
export async function readOrCreateDevSecret(file: string, generate: () => string): Promise<{ value: string; created: boolean }> {
  const resolved = path.resolve(file);
  try {
    return { value: (await readFile(resolved, 'utf8')).trim(), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(path.dirname(resolved), { recursive: true });
  let created = true;
  await writeFile(resolved, `${generate()}\n`, { mode: 0o600, flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err; // another process created it first: use theirs
    created = false;
  });
  await chmod(resolved, 0o600);
  return { value: (await readFile(resolved, 'utf8')).trim(), created };
}
