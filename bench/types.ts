/**
 * The contract between bench/run.ts and each benchmark module. A benchmark measures; run.ts
 * judges (targets) and prints, so every module's figures land in one table.
 */

export type Comparison = '>=' | '>' | '<=' | '<' | '==';

export interface Target {
  /**
   * performance: a speed or latency goal, judged only in full runs (a smoke run is too short).
   * correctness: always judged (e.g. every response was 200).
   */
  kind: 'performance' | 'correctness';
  /** Which figure the target applies to: the measured value, or value / baseline. */
  on: 'value' | 'ratio';
  op: Comparison;
  limit: number;
}

export interface BenchResult {
  /** Row label, e.g. "catalog" or "catalog (no rate limit)". */
  subject: string;
  /** e.g. "req/s", "p99". */
  metric: string;
  unit: string;
  value: number;
  /** The same metric measured on the baseline in the same run, when there is one. */
  baseline?: number;
  target?: Target;
}

export interface BenchOptions {
  /** Seconds of measured load per target. */
  durationS: number;
  /** Seconds of unmeasured load per target before measuring. */
  warmupS: number;
  connections: number;
  /** Also measure diagnostic variants (informational rows, no targets). */
  variants: boolean;
  /** A short sanity run (CI): only correctness targets are judged. */
  smoke: boolean;
  env: BenchEnvironment;
  /** Progress lines; the table is printed by run.ts at the end. */
  progress: (line: string) => void;
}

export interface Benchmark {
  name: string;
  description: string;
  run(options: BenchOptions): Promise<BenchResult[]>;
}

/** Where benchmarks find PostgreSQL and Redis. Never the `gateway` or `gateway_test` databases. */
export interface BenchEnvironment {
  databaseUrl: string;
  redisUrl: string;
}
