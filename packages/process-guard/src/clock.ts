/**
 * The guards' clock, in ms: `performance.now()` shifted onto `process.hrtime()`'s base, so that the main
 * thread and the watchdog worker (each with its own `performance.timeOrigin`) read the same monotonic time.
 * `performance` is looked up at every call, so fake timers that replace it control the guards too.
 */
const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now();

/** Monotonic time in ms, shared by every thread of the process. */
export function clock(): number {
  return performance.now() + offset;
}
