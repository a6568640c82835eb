/** What the parent asks of the load generator process, and what it answers (IPC, structured clone). */

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  connections: number;
  durationS: number;
  /** Warm-up only: run the load, answer nothing but counts. */
  discard?: boolean;
}

/** One run of load against one URL: raw figures, merged across rounds by load-stats.ts. */
export interface LoadSegment {
  url: string;
  durationS: number;
  responses: number;
  /** Responses whose status was not 2xx. */
  non2xx: number;
  /** Connection errors, including timeouts. */
  errors: number;
  statusCodes: Record<string, number>;
  /** Bytes received (headers and body). */
  bytes: number;
  /** Every response time in ms (sub-millisecond; autocannon's own histogram has 1 ms buckets). */
  times: Float64Array;
}

export type LoadMessage = { ok: true; segment: LoadSegment } | { ok: false; error: string };
