import type { LoadSegment } from './load-spec.js';

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  p99_9: number;
  max: number;
  mean: number;
}

/** One target's figures over all its measured rounds. */
export interface LoadResult {
  url: string;
  /** Responses per second of measured time. */
  rps: number;
  responses: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  /** Milliseconds. */
  latency: LatencySummary;
  bytesPerResponse: number;
  durationS: number;
  rounds: number;
}

/** Nearest-rank percentile of ascending `sorted`. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Percentiles, max and mean of ascending `sorted` (NaN when it is empty). */
export function summarise(sorted: Float64Array): LatencySummary {
  let sum = 0;
  for (const t of sorted) sum += t;
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    p99_9: percentile(sorted, 99.9),
    max: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
  };
}

/** `200×1234 503×2`, for progress lines. */
export function formatStatusCodes(statusCodes: Record<string, number>): string {
  return Object.entries(statusCodes)
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
}

export function mergeSegments(segments: readonly LoadSegment[]): LoadResult {
  if (segments.length === 0) throw new Error('no load segments to merge');
  const responses = segments.reduce((n, s) => n + s.responses, 0);
  const durationS = segments.reduce((n, s) => n + s.durationS, 0);
  const times = new Float64Array(segments.reduce((n, s) => n + s.times.length, 0));
  let offset = 0;
  for (const s of segments) {
    times.set(s.times, offset);
    offset += s.times.length;
  }
  times.sort();
  const statusCodes: Record<string, number> = {};
  for (const s of segments) for (const [code, n] of Object.entries(s.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    url: segments[0]!.url,
    rps: responses / durationS,
    responses,
    non2xx: segments.reduce((n, s) => n + s.non2xx, 0),
    errors: segments.reduce((n, s) => n + s.errors, 0),
    statusCodes,
    latency: summarise(times),
    bytesPerResponse: responses > 0 ? segments.reduce((n, s) => n + s.bytes, 0) / responses : 0,
    durationS,
    rounds: segments.length,
  };
}
