import type { Logger } from './logger.js';

export interface ShutdownStep {
  name: string;
  run(): Promise<unknown>;
}

/**
 * Runs clean-up steps in order (callers push them in start order; they run in reverse), each
 * awaited, so the HTTP server stops taking requests first, then workers finish in-flight jobs,
 * then connections close. A deadline bounds the whole: past it the process exits non-zero
 * rather than hang a deployment; BullMQ and the reconciler pick up whatever was interrupted.
 */
export function createShutdown(log: Logger, timeoutMs: number) {
  const steps: ShutdownStep[] = [];
  let running: Promise<void> | undefined;

  async function runAll(reason: string): Promise<void> {
    log.info({ reason }, 'shutting down');
    for (const step of [...steps].reverse()) {
      const started = Date.now();
      try {
        await step.run();
        log.debug({ step: step.name, ms: Date.now() - started }, 'stopped');
      } catch (err) {
        log.warn({ step: step.name, err: { message: (err as Error).message } }, 'shutdown step failed');
      }
    }
  }

  return {
    add(name: string, run: () => Promise<unknown>): void {
      steps.push({ name, run });
    },
    /** Idempotent: a second call while shutting down returns the run already under way. */
    run(reason: string): Promise<void> {
      running ??= new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`shutdown did not finish within ${timeoutMs} ms`)), timeoutMs);
        timer.unref();
        runAll(reason).then(
          () => {
            clearTimeout(timer);
            resolve();
          },
          (err: unknown) => {
            clearTimeout(timer);
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
      });
      return running;
    },
  };
}

export type Shutdown = ReturnType<typeof createShutdown>;

/** The parts of `process` the signal wiring uses, so tests can drive it without real signals. */
export interface SignalTarget {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  exit(code: number): void;
}

/**
 * Wires SIGTERM and SIGINT to the shutdown; exits 0 when clean, 1 when it failed or timed out.
 *
 * A repeated SIGTERM while shutting down is ignored: orchestrators may send it again, and killing
 * the process mid-shutdown would interrupt the jobs it is letting finish (the deadline bounds the
 * wait anyway). A second SIGINT is a person pressing Ctrl-C again: exit at once (130, as shells
 * report an interrupted process), since that is what they are asking for.
 */
export function onSignals(shutdown: Shutdown, log: Logger, target: SignalTarget = process): void {
  let shuttingDown = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    target.on(signal, () => {
      if (shuttingDown) {
        if (signal === 'SIGINT') {
          log.warn('second interrupt: exiting without waiting for the shutdown to finish');
          target.exit(130);
        } else {
          log.info({ signal }, 'already shutting down; signal ignored');
        }
        return;
      }
      shuttingDown = true;
      shutdown.run(signal).then(
        () => target.exit(0),
        (err: Error) => {
          log.error({ err: { message: err.message } }, 'unclean shutdown');
          target.exit(1);
        },
      );
    });
  }
}
