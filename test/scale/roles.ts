import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { CrashRig, RunningChild } from '../crash/harness.js';

export type Role = 'api' | 'worker' | 'scheduler';

const PRELOAD = pathToFileURL(path.join(import.meta.dirname, 'role-preload.mjs')).href;

/**
 * `gateway serve --role …` through the crash harness's `start()` (same database, Redis prefix,
 * sandbox, keys and kill/fast-forward handling). The harness has no option for serve's arguments,
 * so a preloaded module adds `--role` from GATEWAY_TEST_ROLES (see role-preload.mjs).
 */
export function startRole(rig: CrashRig, roles: readonly Role[], env: Record<string, string> = {}, failpoints?: string): Promise<RunningChild> {
  const nodeOptions = [process.env.NODE_OPTIONS, `--import=${PRELOAD}`].filter(Boolean).join(' ');
  return rig.start({ env: { ...env, GATEWAY_TEST_ROLES: roles.join(','), NODE_OPTIONS: nodeOptions }, ...(failpoints ? { failpoints } : {}) });
}

/** The JSON log lines a child wrote to stdout (the harness keeps its last 2,000). */
export function logLines(running: RunningChild): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of running.stdoutLines()) {
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a JSON log line
    }
  }
  return out;
}

/** The roles a child said it started with ('gateway started' log line). */
export function startedRoles(running: RunningChild): string[] {
  const started = logLines(running).find((l) => l.msg === 'gateway started');
  return Array.isArray(started?.roles) ? (started.roles as string[]) : [];
}
