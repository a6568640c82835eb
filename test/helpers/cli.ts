import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './env.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a test's gateway process gets: the test database and Redis, nothing inherited that matters. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { UPSTREAM_BASE_URL: _u, CARD_CODE_KEYS: _k, ...rest } = process.env;
  return { ...rest, DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, LOG_LEVEL: 'warn', ...extra };
}

/** Starts `gateway <args>` from the TypeScript sources (tsx), as a separate process. */
export function startGateway(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), ...args], {
    cwd: ROOT,
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs `gateway <args>` to completion. */
export function runGateway(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = startGateway(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Resolves with the first JSON log line on stdout that matches, or rejects on exit/timeout. */
export function waitForLog(child: ChildProcess, match: (line: Record<string, unknown>) => boolean, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`no matching log line within ${timeoutMs} ms`)), timeoutMs);
    const onData = (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          if (match(parsed)) {
            clearTimeout(timer);
            child.stdout!.off('data', onData);
            resolve(parsed);
            return;
          }
        } catch {
          // not a JSON log line
        }
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${code} before the expected log line`));
    });
  });
}

export function waitForExit(child: ChildProcess, timeoutMs = 30_000): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('process did not exit in time')), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
