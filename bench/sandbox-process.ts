/**
 * The provider sandbox in a process of its own, for benchmarks: in production the provider is
 * another machine, so its work (HTTP parsing, the added latency's timers, its state) must not be
 * counted as the gateway's CPU or delay the gateway's event loop. The parent sends the
 * (JSON-serialisable) SandboxOptions once; the child answers its URL and runs until disconnected.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createSandbox, type SandboxOptions } from '../src/sandbox/index.js';

const CHILD_FLAG = '--bench-sandbox-process';

type Message = { ok: true; url: string } | { ok: false; error: string };

export interface SandboxProcess {
  url: string;
  close(): Promise<void>;
}

/** Starts the sandbox in a child process with `options` (functions and loggers cannot cross). */
export async function startSandboxProcess(options: SandboxOptions): Promise<SandboxProcess> {
  const child = fork(fileURLToPath(import.meta.url), [CHILD_FLAG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const message = await new Promise<Message>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Message));
    child.once('exit', (code) => reject(new Error(`the sandbox process exited (code ${code}) before listening`)));
    child.send(options);
  });
  if (!message.ok) throw new Error(`the sandbox process failed: ${message.error}`);
  return {
    url: message.url,
    async close() {
      if (child.connected) child.disconnect();
      await exited;
    },
  };
}

if (process.argv.includes(CHILD_FLAG) && process.send) {
  process.once('message', (options: SandboxOptions) => {
    createSandbox(options)
      .then(async (sandbox) => {
        const url = await sandbox.listen({ host: '127.0.0.1', port: 0 });
        process.once('disconnect', () => void sandbox.close().finally(() => process.exit(0)));
        process.send!({ ok: true, url } satisfies Message);
      })
      .catch((err: Error) => process.send!({ ok: false, error: err.stack ?? err.message } satisfies Message, () => process.exit(1)));
  });
}
