import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('package-lock.json', () => {
  it('records every platform build of msgpackr-extract, or npm ci fails (run scripts/lockfile-platform-entries.mjs)', () => {
    const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, unknown> };
    const optional = (lock.packages['node_modules/msgpackr-extract'] as { optionalDependencies?: Record<string, string> } | undefined)?.optionalDependencies ?? {};
    const missing = Object.keys(optional).filter((name) => !lock.packages[`node_modules/${name}`]);
    expect(missing).toEqual([]);
  });
});
