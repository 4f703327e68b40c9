import type { Worker, WorkerOptions } from "node:worker_threads";

/**
 * Starts the worker thread whose module is `./<name>.js` next to `from` (the caller's `import.meta.url`):
 * the built file in a package's `dist/` (tsdown builds the thread module as an entry of its own). The
 * thread runs with no `execArgv`, so whatever module flags the process runs with (loaders, conditions)
 * never reach it.
 *
 * When only `./<name>.ts` is there (the caller runs from its TypeScript sources, under vitest or tsx), the
 * thread runs that file with Node's own type stripping (`--experimental-strip-types` on the Node 22
 * releases that do not strip by default). A loader such as tsx would start the thread two to five times
 * later, late enough to change what a thread that acts within its first 100 ms does. So the thread module
 * and the modules it imports at run time must be erasable TypeScript (no enums, no parameter properties),
 * and it must spell its relative imports of values with `.ts` (`import { applyWrites } from
 * "./sqlite-writes.ts"`); `import type` is erased.
 *
 * When neither file is there, the worker is still started on the `.js` file and reports the missing module
 * through its `'error'` event, as any thread that fails to start.
 *
 * @param from - the URL the thread's file is resolved against, normally the caller's `import.meta.url`
 * @param name - the thread module's file name without its extension, e.g. `"watchdog-thread"`
 * @param options - the worker's options, except `eval` and `execArgv`, which this function sets
 */
export function startWorker(
  from: string | URL,
  name: string,
  options: Omit<WorkerOptions, "eval" | "execArgv"> = {},
): Worker {
  // Loaded on the first thread rather than imported, so that importing @x/core/internal stays cheap.
  const { Worker } = process.getBuiltinModule("node:worker_threads");
  const { existsSync } = process.getBuiltinModule("node:fs");
  const built = new URL(`./${name}.js`, from);
  const source = new URL(`./${name}.ts`, from);
  if (existsSync(built) || !existsSync(source)) return new Worker(built, { ...options, execArgv: [] });
  return new Worker(source, {
    ...options,
    execArgv: process.features.typescript ? [] : ["--experimental-strip-types"],
  });
}
