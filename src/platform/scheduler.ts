import { schedule, type ScheduledTask } from 'node-cron';
import type { Logger } from './logger.js';

export interface Scheduler {
  /** Runs `task` at each cron slot; the slot's start time is passed so jobs can be keyed by it. */
  every(name: string, expression: string, task: (slot: Date) => Promise<void>): void;
  stop(): Promise<void>;
}

/**
 * node-cron in one place. A task only *enqueues* work (a BullMQ job whose id derives from the
 * slot), so any number of scheduler instances produce one job per slot and the work itself runs
 * in a worker with retries.
 */
export function createScheduler({ log, timeZone }: { log: Logger; timeZone?: string | undefined }): Scheduler {
  const tasks: ScheduledTask[] = [];
  return {
    every(name, expression, task) {
      const scheduled = schedule(
        expression,
        async (ctx) => {
          try {
            await task(ctx.date);
          } catch (err) {
            log.error({ task: name, err: { message: (err as Error).message } }, 'scheduled task failed');
          }
        },
        { name, noOverlap: true, ...(timeZone ? { timezone: timeZone } : {}) },
      );
      tasks.push(scheduled);
      log.info({ task: name, expression, timeZone, next: scheduled.getNextRun()?.toISOString() }, 'scheduled');
    },
    async stop() {
      for (const task of tasks) {
        await task.stop();
        await task.destroy();
      }
      tasks.length = 0;
    },
  };
}
