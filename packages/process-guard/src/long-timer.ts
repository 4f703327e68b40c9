import { MAX_DURATION_MS } from "@x/core/internal";

/**
 * Calls `fn` after `ms`, however long: a Node timer waits at most `MAX_DURATION_MS` (about 24.8 days; a longer
 * one fires at once), so a longer wait is chained from timers of at most that. The timers are unref'd.
 *
 * @returns a function that cancels the wait
 */
export function waitLong(ms: number, fn: () => void): () => void {
  let timer: NodeJS.Timeout;
  const step = (left: number) => {
    timer = setTimeout(
      () => (left > MAX_DURATION_MS ? step(left - MAX_DURATION_MS) : fn()),
      Math.min(left, MAX_DURATION_MS),
    );
    timer.unref();
  };
  step(ms);
  return () => clearTimeout(timer);
}
