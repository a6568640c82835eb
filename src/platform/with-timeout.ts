/**
 * Resolves or rejects as `promise` does, or rejects with `timeoutError()` after `ms`; the timer
 * never outlives the promise.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, timeoutError: () => Error = () => new Error(`no answer within ${ms} ms`)): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timeoutError()), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
