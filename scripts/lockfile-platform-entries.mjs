// Records, in package-lock.json, the other-platform builds of msgpackr-extract (an optional
// native speed-up of BullMQ's msgpackr).
//
// npm 11 writes a lockfile without them when the registry it can reach does not serve them (the
// case on our build machines), and `npm ci` then refuses the lockfile ("Missing: @msgpackr-
// extract/msgpackr-extract-darwin-arm64@ from lock file", npm/cli#4828, #8320). Each entry is
// restricted to its os/cpu and optional, so npm skips it on every other platform: it is only
// ever fetched on the platform it is for. Run after `npm install` if test/lockfile.test.ts fails.
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const parent = lock.packages['node_modules/msgpackr-extract'];
if (!parent) {
  console.log('msgpackr-extract is not in the lockfile: nothing to do');
  process.exit(0);
}
const PLATFORMS = {
  'darwin-arm64': ['darwin', 'arm64'],
  'darwin-x64': ['darwin', 'x64'],
  'linux-arm': ['linux', 'arm'],
  'linux-arm64': ['linux', 'arm64'],
  'linux-x64': ['linux', 'x64'],
  'win32-x64': ['win32', 'x64'],
};
let added = 0;
for (const [name, [os, cpu]] of Object.entries(PLATFORMS)) {
  const key = `node_modules/@msgpackr-extract/msgpackr-extract-${name}`;
  if (lock.packages[key]) continue;
  lock.packages[key] = { version: parent.version, cpu: [cpu], license: 'MIT', optional: true, os: [os] };
  added++;
}
const sorted = {};
for (const k of Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0))) sorted[k] = lock.packages[k];
lock.packages = sorted;
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entr${added === 1 ? 'y' : 'ies'} for msgpackr-extract ${parent.version}`);
