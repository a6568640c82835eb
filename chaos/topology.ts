import type { CrashRig, RunningChild } from '../test/crash/harness.js';
import { startRole, type Role } from '../test/scale/roles.js';

/**
 * The deployment the chaos scenarios run: one API process, two worker processes and one
 * scheduler (whose reconciler re-queues work that lost its job), each `gateway serve --role …`
 * started through the crash harness (test/crash/harness.ts) on its database, Redis prefix and
 * in-process sandbox. Every byte the processes write to stdout/stderr is kept, for the scan for
 * plaintext card codes.
 */
export interface Topology {
  api: RunningChild;
  workers: RunningChild[];
  scheduler: RunningChild;
  /** SIGKILLs worker `index` (the harness fast-forwards its leases and job locks) and starts a new one in its place. */
  killAndRestartWorker(index: number, cause: string): Promise<void>;
  /** Starts a process for one role with the same settings (e.g. after an outage killed one). */
  restart(which: 'api' | 'scheduler' | { worker: number }): Promise<void>;
  /** Everything every process of this topology logged so far (stdout and stderr). */
  logs(): string;
  /** Pids of every process this topology started (to tell them from other test runs). */
  pids: Set<number>;
}

export interface TopologyOptions {
  workers?: number;
  workerConcurrency?: number;
  env?: Record<string, string>;
}

export async function startTopology(rig: CrashRig, options: TopologyOptions = {}): Promise<Topology> {
  const chunks: string[] = [];
  const pids = new Set<number>();
  const env = { ...(options.env ?? {}) };
  const workerEnv = { ...env, ...(options.workerConcurrency ? { ORDER_WORKER_CONCURRENCY: String(options.workerConcurrency) } : {}) };

  const start = async (roles: Role[], extra: Record<string, string>): Promise<RunningChild> => {
    const running = await startRole(rig, roles, extra);
    pids.add(running.pid);
    // What the harness buffered before it resolved (start-up, possibly a first order), then the rest.
    chunks.push(running.stdoutLines().join('\n'), '\n', running.stderr());
    running.child.stdout!.on('data', (d: Buffer) => chunks.push(d.toString()));
    running.child.stderr!.on('data', (d: Buffer) => chunks.push(d.toString()));
    return running;
  };

  const [api, scheduler, ...workers] = await Promise.all([
    start(['api'], env),
    start(['scheduler'], env),
    ...Array.from({ length: options.workers ?? 2 }, () => start(['worker'], workerEnv)),
  ]);
  const topology: Topology = {
    api,
    scheduler,
    workers,
    pids,
    async killAndRestartWorker(index, cause) {
      await rig.kill(topology.workers[index]!, cause);
      topology.workers[index] = await start(['worker'], workerEnv);
    },
    async restart(which) {
      if (which === 'api') topology.api = await start(['api'], env);
      else if (which === 'scheduler') topology.scheduler = await start(['scheduler'], env);
      else topology.workers[which.worker] = await start(['worker'], workerEnv);
    },
    logs: () => chunks.join(''),
  };
  return topology;
}

export function isAlive(running: RunningChild): boolean {
  return running.child.exitCode === null && running.child.signalCode === null;
}
