import type { LatencySummary } from './load-stats.js';
import type { BenchResult, Comparison, Target } from './types.js';

export interface JudgedResult extends BenchResult {
  ratio: number | undefined;
  /** undefined: informational row, no target. */
  pass: boolean | undefined;
}

/** p50, p99 and p99.9 (ms) of `m` against the baseline's; the p99 row judged `< p99LimitMs` when that is given. */
export function latencyRows(subject: string, m: LatencySummary, baseline: LatencySummary, p99LimitMs?: number): BenchResult[] {
  return [
    { subject, metric: 'p50', unit: 'ms', value: m.p50, baseline: baseline.p50 },
    {
      subject,
      metric: 'p99',
      unit: 'ms',
      value: m.p99,
      baseline: baseline.p99,
      ...(p99LimitMs !== undefined ? { target: { kind: 'performance', on: 'value', op: '<', limit: p99LimitMs } as const } : {}),
    },
    { subject, metric: 'p99.9', unit: 'ms', value: m.p99_9, baseline: baseline.p99_9 },
  ];
}

/** A count that must be 0, judged in every run (smoke included). */
export function correctnessRow(subject: string, metric: string, value: number, baseline?: number): BenchResult {
  return {
    subject,
    metric,
    unit: '',
    value,
    ...(baseline !== undefined ? { baseline } : {}),
    target: { kind: 'correctness', on: 'value', op: '==', limit: 0 },
  };
}

function compare(a: number, op: Comparison, b: number): boolean {
  switch (op) {
    case '>=':
      return a >= b;
    case '>':
      return a > b;
    case '<=':
      return a <= b;
    case '<':
      return a < b;
    case '==':
      return a === b;
  }
}

export function judge(result: BenchResult): JudgedResult {
  const ratio = result.baseline === undefined || result.baseline === 0 ? undefined : result.value / result.baseline;
  let pass: boolean | undefined;
  if (result.target) {
    const subject = result.target.on === 'ratio' ? ratio : result.value;
    pass = subject !== undefined && Number.isFinite(subject) && compare(subject, result.target.op, result.target.limit);
  }
  return { ...result, ratio, pass };
}

function formatNumber(n: number | undefined, unit = ''): string {
  if (n === undefined) return '';
  const digits = Math.abs(n) >= 1000 || Number.isInteger(n) ? 0 : Math.abs(n) >= 10 ? 1 : 2;
  const text = n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return unit ? `${text} ${unit}` : text;
}

function formatTarget(target: Target | undefined, unit: string): string {
  if (!target) return '';
  return target.on === 'ratio' ? `ratio ${target.op} ${target.limit}` : `${target.op} ${formatNumber(target.limit, unit)}`;
}

/** One plain-text table (also valid Markdown) with every figure, so it can be pasted into docs. */
export function renderTable(rows: readonly JudgedResult[]): string {
  const header = ['benchmark', 'metric', 'value', 'baseline', 'ratio', 'target', 'result'];
  const body = rows.map((r) => [
    r.subject,
    r.metric,
    formatNumber(r.value, r.unit),
    formatNumber(r.baseline, r.unit),
    r.ratio === undefined ? '' : r.ratio.toFixed(2),
    formatTarget(r.target, r.unit),
    r.pass === undefined ? '' : r.pass ? 'pass' : 'FAIL',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const numeric = new Set([2, 3, 4]);
  const line = (cells: string[]) => `| ${cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (numeric.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(header), rule, ...body.map(line)].join('\n');
}
