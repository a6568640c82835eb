import { startLoadGenerator } from './load.js';
import type { LoadSegment } from './load-spec.js';
import { mergeSegments, type LoadResult } from './load-stats.js';
import type { BenchOptions } from './types.js';

export interface HttpTarget {
  name: string;
  url: string;
  headers?: Record<string, string>;
}

/** Measured load is cut into rounds of about this length, alternating between targets. */
const ROUND_S = 2;

/**
 * Measures every target the same way, from one load-generator process: a warm-up per target,
 * then the measured time split into rounds that visit the targets in alternating order
 * (A B, B A, A B, ...). Anything else running on the machine then weighs on baseline and
 * subject alike, so their ratio stays meaningful on a shared host.
 */
export async function measureTargets(targets: readonly HttpTarget[], options: BenchOptions): Promise<Map<string, LoadResult>> {
  const generator = startLoadGenerator();
  try {
    const spec = (t: HttpTarget, durationS: number, discard = false) => ({
      url: t.url,
      headers: t.headers ?? {},
      connections: options.connections,
      durationS,
      discard,
    });
    if (options.warmupS > 0) {
      for (const t of targets) {
        options.progress(`${t.name}: warm-up ${options.warmupS} s`);
        const warm = await generator.run(spec(t, options.warmupS, true));
        if (warm.non2xx + warm.errors > 0) options.progress(`${t.name}: !!! warm-up saw ${warm.non2xx} non-2xx and ${warm.errors} errors`);
      }
    }
    const rounds = Math.max(1, Math.round(options.durationS / ROUND_S));
    const segmentS = options.durationS / rounds;
    const segments = new Map<string, LoadSegment[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      const figures: string[] = [];
      for (const t of order) {
        const segment = await generator.run(spec(t, segmentS));
        segments.get(t.name)!.push(segment);
        figures.push(`${t.name} ${Math.round(segment.responses / segment.durationS)}/s`);
      }
      options.progress(`round ${round + 1}/${rounds}: ${figures.join(', ')}`);
    }
    return new Map([...segments].map(([name, list]) => [name, mergeSegments(list)]));
  } finally {
    await generator.close();
  }
}
