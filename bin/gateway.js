#!/usr/bin/env node
// The `gateway` command. Runs the compiled build; `npm run build` (or `npm start`) makes it.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('gateway: not built yet; run `npm run build` first (npm start does it for you)\n');
  process.exit(1);
}
await import(entry.href);
