// node:timers, not the globals: fake timers must not turn the hold into a no-op
import { MAX_DURATION_MS } from "@x/core/internal";

const { setInterval } = process.getBuiltinModule("node:timers");

/** Guarded calls (`run()`, wrapped calls) that have not settled yet. */
let pending = 0;
/** One idle interval for the whole process, ref'd only while a guarded call is pending. */
let handle: NodeJS.Timeout | undefined;

/**
 * Keeps the process alive until the matching {@link releaseProcess}: a pending `run()` is awaited by someone,
 * so the process must not end under it (a script would exit 0, or 13 on an unsettled top-level await) while
 * the guard's own timers, unref'd, would still settle it. Costs a counter, and a `ref()` when it leaves 0.
 */
export function holdProcess(): void {
  if (pending++ > 0) return;
  handle ??= setInterval(() => {}, MAX_DURATION_MS);
  handle.ref();
}

/** Ends one {@link holdProcess}; the process may end again once none is left. */
export function releaseProcess(): void {
  if (--pending === 0) handle!.unref();
}
