import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadSegment, LoadSpec } from './load-spec.js';

const WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url));

export interface LoadGenerator {
  /** Runs load against `spec.url` for `spec.durationS` and answers the raw figures. */
  run(spec: LoadSpec): Promise<LoadSegment>;
  close(): Promise<void>;
}

/** A child process that answers each spec sent to it with one `{ ok, segment }` message. */
export interface SegmentProcess<Spec, Segment> {
  run(spec: Spec): Promise<Segment>;
  /** Disconnects and waits for the process to exit. */
  close(): Promise<void>;
}

/**
 * Forks `module` with `args`, inheriting this process's exec arguments (so under tsx it runs
 * TypeScript the same way) with 'advanced' serialisation (typed arrays arrive as such). `name`
 * (e.g. 'load generator') and whether it `has` or `have` exited label its errors.
 */
export function forkSegmentProcess<Spec extends object, Segment>(
  module: string,
  args: readonly string[],
  label: { name: string; has: 'has' | 'have' },
): SegmentProcess<Spec, Segment> {
  type Message = { ok: true; segment: Segment } | { ok: false; error: string };
  const child = fork(module, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  return {
    async run(spec) {
      if (exitCode !== undefined) throw new Error(`${label.name} ${label.has} exited (code ${exitCode})`);
      const answer = new Promise<Message>((resolve, reject) => {
        const onExit = () => reject(new Error(`${label.name} exited (code ${exitCode}) without an answer`));
        child.once('message', (message) => {
          child.off('exit', onExit);
          resolve(message as Message);
        });
        child.once('exit', onExit);
      });
      child.send(spec);
      const message = await answer;
      if (!message.ok) throw new Error(`${label.name} failed: ${message.error}`);
      return message.segment;
    },
    async close() {
      if (exitCode === undefined && child.connected) child.disconnect();
      await exited;
    },
  };
}

/**
 * Starts the load generator process (load-worker.ts), answering a LoadMessage per LoadSpec;
 * 'advanced' serialisation carries the response times as a Float64Array.
 */
export function startLoadGenerator(): LoadGenerator {
  return forkSegmentProcess<LoadSpec, LoadSegment>(WORKER, [], { name: 'load generator', has: 'has' });
}
