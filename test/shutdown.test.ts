import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/platform/logger.js';
import { createShutdown, onSignals, type SignalTarget } from '../src/platform/shutdown.js';
import { LogCapture } from './helpers/context.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

/** A stand-in for `process`: signals are events, exits are recorded. */
class FakeProcess extends EventEmitter implements SignalTarget {
  readonly exits: number[] = [];
  exit(code: number): void {
    this.exits.push(code);
  }
}

describe('graceful shutdown', () => {
  it('runs each step once, in reverse order, past a failing step, however often it is asked', async () => {
    const logs = new LogCapture();
    const shutdown = createShutdown(createLogger('debug', logs), 5_000);
    const ran: string[] = [];
    shutdown.add('database', async () => ran.push('database'));
    shutdown.add('queues', async () => {
      ran.push('queues');
      throw new Error('queue close failed');
    });
    shutdown.add('http', async () => {
      await tick();
      ran.push('http');
    });
    const first = shutdown.run('SIGTERM');
    const second = shutdown.run('SIGTERM');
    expect(second).toBe(first);
    await first;
    await shutdown.run('again');
    expect(ran).toEqual(['http', 'queues', 'database']);
    expect(logs.text).toMatch(/shutdown step failed/);
  });

  it('fails once the deadline passes', async () => {
    const shutdown = createShutdown(createLogger('silent'), 50);
    shutdown.add('stuck', () => new Promise(() => undefined));
    await expect(shutdown.run('SIGTERM')).rejects.toThrow(/did not finish within 50 ms/);
  });

  it('ignores a repeated SIGTERM, and exits 0 once the shutdown is done', async () => {
    const proc = new FakeProcess();
    let finish!: () => void;
    const shutdown = createShutdown(createLogger('silent'), 5_000);
    let runs = 0;
    shutdown.add('work', () => {
      runs++;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    onSignals(shutdown, createLogger('silent'), proc);
    proc.emit('SIGTERM');
    proc.emit('SIGTERM');
    await tick();
    expect(proc.exits).toEqual([]);
    finish();
    await tick();
    expect(proc.exits).toEqual([0]);
    expect(runs).toBe(1);
  });

  it('exits 130 at once on a second SIGINT, and 1 when the shutdown fails', async () => {
    const proc = new FakeProcess();
    const shutdown = createShutdown(createLogger('silent'), 5_000);
    shutdown.add('stuck', () => new Promise(() => undefined));
    onSignals(shutdown, createLogger('silent'), proc);
    proc.emit('SIGINT');
    await tick();
    expect(proc.exits).toEqual([]);
    proc.emit('SIGINT');
    expect(proc.exits).toEqual([130]);

    const failing = new FakeProcess();
    const timesOut = createShutdown(createLogger('silent'), 20);
    timesOut.add('stuck', () => new Promise(() => undefined));
    onSignals(timesOut, createLogger('silent'), failing);
    failing.emit('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(failing.exits).toEqual([1]);
  });
});
