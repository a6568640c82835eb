import { catalogBenchmark } from './catalog.js';
import { ordersBenchmark } from './orders.js';
import type { Benchmark } from './types.js';
import { webhooksBenchmark } from './webhooks.js';

/** Every benchmark `npm run bench` knows, in the order they run. Add new modules here. */
export const BENCHMARKS: readonly Benchmark[] = [catalogBenchmark, ordersBenchmark, webhooksBenchmark];
