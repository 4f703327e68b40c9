/** Options of {@link sleep}. */
export interface SleepOptions {
  /** Aborting it ends the sleep early: the promise rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** When `false`, the pending timer does not keep the process alive. Default `true`. */
  ref?: boolean;
}

/**
 * Resolves after `ms` milliseconds, or rejects with `signal.reason` as soon as the signal aborts (at once if
 * it already has). The timer is cleared on abort, so nothing is left behind.
 *
 * @param ms - how long to wait, in milliseconds (negative counts as 0)
 * @param options - `signal` and `ref`
 */
export function sleep(ms: number, options: SleepOptions = {}): Promise<void> {
  const { signal, ref = true } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    if (!ref) timer.unref();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
