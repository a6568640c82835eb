import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadMessage, LoadSegment, LoadSpec } from './load-spec.js';

const WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url));

export interface LoadGenerator {
  /** Runs load against `spec.url` for `spec.durationS` and answers the raw figures. */
  run(spec: LoadSpec): Promise<LoadSegment>;
  close(): Promise<void>;
}

/**
 * Starts the load generator process (load-worker.ts). It inherits this process's exec
 * arguments, so under tsx it runs TypeScript the same way; 'advanced' serialisation carries the
 * response times as a Float64Array.
 */
export function startLoadGenerator(): LoadGenerator {
  const child = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  return {
    async run(spec) {
      if (exitCode !== undefined) throw new Error(`load generator has exited (code ${exitCode})`);
      const answer = new Promise<LoadMessage>((resolve, reject) => {
        const onExit = () => reject(new Error(`load generator exited (code ${exitCode}) without an answer`));
        child.once('message', (message) => {
          child.off('exit', onExit);
          resolve(message as LoadMessage);
        });
        child.once('exit', onExit);
      });
      child.send(spec);
      const message = await answer;
      if (!message.ok) throw new Error(`load generator failed: ${message.error}`);
      return message.segment;
    },
    async close() {
      if (exitCode === undefined && child.connected) child.disconnect();
      await exited;
    },
  };
}
