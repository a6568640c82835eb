import type { FastifyBaseLogger } from 'fastify';
import { levels, type Bindings, type ChildLoggerOptions, type LevelWithSilentOrString } from 'pino';

/**
 * Fastify gives every request a child logger (with its request id). Creating a pino child runs
 * the redaction machinery over its bindings, which for a fast in-memory answer (the catalog)
 * costs more than the answer itself, even when that request never logs. This child is created
 * only when the request actually logs at an enabled level.
 */
class LazyRequestLogger {
  #real: FastifyBaseLogger | undefined;
  #level: string;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {
    this.#level = options.level ?? parent.level;
  }

  private get real(): FastifyBaseLogger {
    this.#real ??= this.parent.child(this.bindings, this.options);
    return this.#real;
  }

  private enabled(level: string): boolean {
    const threshold = levels.values[this.#level] ?? Number.POSITIVE_INFINITY;
    return (levels.values[level] ?? 0) >= threshold;
  }

  get level(): LevelWithSilentOrString {
    return this.#level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#level = level;
    if (this.#real) this.#real.level = level;
  }

  private emit(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    if (this.enabled(level)) Reflect.apply(this.real[level], this.real, args);
  }

  fatal(...args: unknown[]): void {
    this.emit('fatal', args);
  }
  error(...args: unknown[]): void {
    this.emit('error', args);
  }
  warn(...args: unknown[]): void {
    this.emit('warn', args);
  }
  info(...args: unknown[]): void {
    this.emit('info', args);
  }
  debug(...args: unknown[]): void {
    this.emit('debug', args);
  }
  trace(...args: unknown[]): void {
    this.emit('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`. */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options);
}
