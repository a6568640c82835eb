import { AsyncLocalStorage } from 'node:async_hooks';
import type { UpstreamCallRecord } from '../upstream/index.js';

/**
 * Attributes provider calls to the order being processed. The provider client reports every
 * HTTP attempt through one `onCall` hook; the pipeline runs each step inside `collect`, so the
 * attempts made for that step (retries and re-logins included) land on that order's timeline.
 */
export function createCallRecorder() {
  const storage = new AsyncLocalStorage<UpstreamCallRecord[]>();
  return {
    /** The client's onCall hook. Calls made outside `collect` (catalog sync) are ignored here. */
    record(call: UpstreamCallRecord): void {
      storage.getStore()?.push(call);
    },
    async collect<T>(run: () => Promise<T>): Promise<{ result: T; calls: UpstreamCallRecord[] } | { error: unknown; calls: UpstreamCallRecord[] }> {
      const calls: UpstreamCallRecord[] = [];
      return storage.run(calls, async () => {
        try {
          return { result: await run(), calls };
        } catch (error) {
          return { error, calls };
        }
      });
    },
  };
}

export type CallRecorder = ReturnType<typeof createCallRecorder>;
