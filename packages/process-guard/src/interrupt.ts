import { XError } from "@x/core";
import { ErrorCode, type ExecutionTimeout, type MemoryLimitExceeded } from "./errors.js";

/** How many `cause` links {@link interruptOf} follows before it gives up (cycles end there too). */
export const MAX_CAUSE_DEPTH = 8;

/**
 * `error`, then its `cause`, then that one's `cause`, …: at most {@link MAX_CAUSE_DEPTH} links, so a cycle
 * or a very long chain ends.
 */
export function* causeChain(error: unknown): Generator<unknown, void, undefined> {
  let current = error;
  for (let depth = 0; depth <= MAX_CAUSE_DEPTH; depth++) {
    yield current;
    if (typeof current !== "object" || current === null || !("cause" in current)) return;
    try {
      current = (current as { cause?: unknown }).cause;
    } catch {
      return; // a throwing getter ends the chain: recognising an error never throws
    }
  }
}

/**
 * The guard interrupt behind `error`: `error` itself when it is an {@link ExecutionTimeout} or a
 * {@link MemoryLimitExceeded}, else the first one found along its `cause` chain (at most 8 links deep), else
 * `undefined`.
 *
 * A task's signal aborts with the guard's error as its `reason`, and what rejects depends on the API that
 * noticed: `fetch` rejects with the reason itself, while `timers/promises`, `events.once`, streams and
 * `child_process` reject with an `AbortError` whose `cause` is the reason. This finds it in every case, and
 * across duplicate installs of the package (it tests the error's `code` with `XError.is`).
 *
 * @param error - anything caught
 *
 * @example
 * ```ts
 * try {
 *   await setTimeout(10_000, undefined, { signal });
 * } catch (error) {
 *   const interrupt = interruptOf(error);
 *   if (interrupt) console.log(`stopped after ${interrupt.elapsedMs} ms`);
 * }
 * ```
 */
export function interruptOf(error: unknown): ExecutionTimeout | MemoryLimitExceeded | undefined {
  for (const link of causeChain(error)) {
    if (XError.is(link, ErrorCode.TIMEOUT)) return link as ExecutionTimeout;
    if (XError.is(link, ErrorCode.MEMORY)) return link as MemoryLimitExceeded;
  }
  return undefined;
}

/**
 * Whether `error` is a guard's interrupt, or was caused by one: the test to rethrow with, since JavaScript
 * has no `BaseException` and a `catch` that handles ordinary failures would otherwise swallow the interrupt.
 * It sees through the `AbortError` that `timers/promises`, `events.once`, streams and `child_process` reject
 * with (see {@link interruptOf}). Other guard errors (a bad option, no context) are not interrupts.
 *
 * @param error - anything caught
 *
 * @example
 * ```ts
 * try {
 *   await step(signal);
 * } catch (error) {
 *   if (isInterrupt(error)) throw error; // run() rejects with the guard's error
 *   log(error);
 * }
 * ```
 */
export function isInterrupt(error: unknown): boolean {
  return interruptOf(error) !== undefined;
}
