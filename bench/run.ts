/**
 * `npm run bench [-- <name>...]`: runs the named benchmarks (default: all), then prints one table
 * with every figure, its same-run baseline, the ratio and the target. Exit status: 0 all targets
 * met, 1 a target failed or a benchmark crashed, 2 unknown benchmark name.
 *
 * Environment (all optional):
 *   BENCH_DURATION_S (10), BENCH_WARMUP_S (3), BENCH_CONNECTIONS (50)
 *   BENCH_SMOKE=1      1 s runs without warm-up; only correctness targets are judged (CI sanity)
 *   BENCH_VARIANTS=1   also measure diagnostic variants (informational rows)
 *   BENCH_CPU_PROFILE=<prefix>  a CPU profile of the gateway process over each measured load (orders)
 *   BENCH_DATABASE_URL (postgresql://postgres@127.0.0.1:5432/gateway_bench), BENCH_REDIS_URL
 */
import { cpus, loadavg } from 'node:os';
import { BENCHMARKS } from './registry.js';
import { judge, renderTable, type JudgedResult } from './report.js';
import type { Benchmark, BenchOptions } from './types.js';

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    console.error(`${name} must be a non-negative number`);
    process.exit(2);
  }
  return n;
}

function flag(name: string): boolean {
  return ['1', 'true', 'yes'].includes((process.env[name] ?? '').toLowerCase());
}

function listBenchmarks(): string {
  return BENCHMARKS.map((b) => `  ${b.name.padEnd(12)} ${b.description}`).join('\n');
}

function select(names: string[]): Benchmark[] {
  if (names.length === 0) return [...BENCHMARKS];
  const unknown = names.filter((n) => !BENCHMARKS.some((b) => b.name === n));
  if (unknown.length > 0) {
    console.error(`unknown benchmark: ${unknown.join(', ')}\navailable:\n${listBenchmarks()}`);
    process.exit(2);
  }
  return BENCHMARKS.filter((b) => names.includes(b.name));
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h') || args.includes('--list')) {
    console.log(`usage: npm run bench [-- <name>...]\n\nbenchmarks:\n${listBenchmarks()}`);
    return 0;
  }
  const selected = select(args);
  const smoke = flag('BENCH_SMOKE');
  const options: BenchOptions = {
    durationS: positive('BENCH_DURATION_S', smoke ? 1 : 10),
    warmupS: positive('BENCH_WARMUP_S', smoke ? 0 : 3),
    connections: positive('BENCH_CONNECTIONS', 50),
    variants: flag('BENCH_VARIANTS'),
    smoke,
    env: {
      databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/gateway_bench',
      redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    },
    progress: (line) => console.error(`[bench] ${line}`),
  };

  // Other work on the host skews absolute figures (ratios less so): say how busy it was.
  const loadBefore = loadavg()[0]!;
  const results: JudgedResult[] = [];
  let crashed = false;
  for (const benchmark of selected) {
    const started = Date.now();
    try {
      const measured = await benchmark.run(options);
      results.push(...measured.map(judge));
    } catch (err) {
      crashed = true;
      console.error(`[bench] ${benchmark.name} failed:`, err);
      results.push({ subject: benchmark.name, metric: 'crashed (see above)', unit: '', value: Number.NaN, ratio: undefined, pass: false });
    }
    options.progress(`${benchmark.name}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

  // A smoke run is too short to say anything about speed: show the figures, judge only correctness.
  const shown = results.map((r) => (smoke && r.target?.kind === 'performance' ? { ...r, pass: undefined } : r));
  const host = `${cpus().length} CPUs, load average ${loadBefore.toFixed(2)} before / ${loadavg()[0]!.toFixed(2)} after`;
  console.log(`\nnode ${process.version}, ${host}, ${options.connections} connections, ${options.warmupS} s warm-up + ${options.durationS} s measured per target${smoke ? ' (smoke run: performance targets not judged)' : ''}\n`);
  console.log(renderTable(shown));
  const failed = shown.filter((r) => r.pass === false);
  if (failed.length > 0) console.log(`\n${failed.length} target(s) not met: ${failed.map((r) => `${r.subject} ${r.metric}`).join('; ')}`);
  return crashed || failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
