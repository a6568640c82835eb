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
    /** Idempotent: a second signal while shutting down does not start another run. */
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

/** Wires SIGTERM and SIGINT to the shutdown; exits 0 when clean, 1 when it failed or timed out. */
export function onSignals(shutdown: Shutdown, log: Logger): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      shutdown.run(signal).then(
        () => process.exit(0),
        (err: Error) => {
          log.error({ err: { message: err.message } }, 'unclean shutdown');
          process.exit(1);
        },
      );
    });
  }
}
