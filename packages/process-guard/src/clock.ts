/**
 * The guards' clock, in ms: `performance.now()` shifted onto `process.hrtime()`'s base, so that the main
 * thread and the watchdog worker (each with its own `performance.timeOrigin`) read the same monotonic time.
 * `performance` is looked up at every call, so fake timers that replace it control the guards too. While it is
 * Node's own (the global's lazy getter is untouched), `process.hrtime()` is read instead, the same time: the
 * first read of `performance` loads `perf_hooks` and a dozen more modules, a cost on x-guard's startup.
 */
const nativePerformance = Object.getOwnPropertyDescriptor(globalThis, "performance")?.get;
let offset: number | undefined;

/** Monotonic time in ms, shared by every thread of the process. */
export function clock(): number {
  const hrtimeMs = Number(process.hrtime.bigint()) / 1e6;
  const current = Object.getOwnPropertyDescriptor(globalThis, "performance");
  if (nativePerformance !== undefined && current?.get === nativePerformance) return hrtimeMs;
  // replaced (fake timers): its time, on hrtime's base, measured with Node's own performance.now()
  offset ??= hrtimeMs - process.getBuiltinModule("node:perf_hooks").performance.now();
  return performance.now() + offset;
}
