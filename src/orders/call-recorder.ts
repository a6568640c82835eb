import type { CallOptions, UpstreamCallRecord } from '../upstream/index.js';

export type Collected<T> = { result: T; calls: UpstreamCallRecord[] } | { error: unknown; calls: UpstreamCallRecord[] };

/**
 * Runs one provider call for an order and collects its HTTP attempts (retries, the attempt a
 * stale token failed, and a login the call started) for that order's timeline, with the call's
 * error caught.
 *
 * The attempts are handed over explicitly through the call's `onCall` option. (This used an
 * AsyncLocalStorage before: on Node 20 that switches on promise hooks for the whole process,
 * a tax on every promise of every request, and the pipeline makes many.)
 */
export async function collectCalls<T>(run: (options: Required<CallOptions>) => Promise<T>): Promise<Collected<T>> {
  const calls: UpstreamCallRecord[] = [];
  const onCall = (call: UpstreamCallRecord) => {
    calls.push(call);
  };
  try {
    return { result: await run({ onCall }), calls };
  } catch (error) {
    return { error, calls };
  }
}
