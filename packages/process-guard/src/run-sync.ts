import { randomUUID } from "node:crypto";
import vm from "node:vm";
import { isMainThread } from "node:worker_threads";
import { silentLogger } from "@x/core";
import { clock } from "./clock.js";
import { enclosing, type Scope, scopes } from "./context.js";
import { ErrorCode, ExecutionTimeout, GuardError, MemoryLimitExceeded } from "./errors.js";
import { type RunSyncOptions, runSyncConfig } from "./options.js";
import { isCode } from "./process-info.js";
import { Watchdog } from "./watchdog.js";
import { SyncReason, SyncState } from "./watchdog-layout.js";

/** The `progress()` context of a `runSync` call: it moves the watchdog's deadline. */
class SyncScope implements Scope {
  ended = false;
  readonly restartable = true;
  readonly hasSignal = false;
  readonly signal = undefined;
  readonly owner = undefined;

  constructor(
    readonly parent: Scope | undefined,
    readonly watchdog: Watchdog,
  ) {}

  progress(): void {
    if (!this.ended) this.watchdog.progressSync(clock());
  }
}

interface Call {
  fn: () => unknown;
  watchdog: Watchdog;
}

let current: Call | undefined;

/**
 * The guarded section. It runs inside `runInThisContext({ breakOnSigint: true })` and arms and disarms the
 * watchdog itself: around that call Node detaches the `'SIGINT'` listeners and afterwards restores its
 * exit-on-SIGINT handler, so a SIGINT landing just outside would kill the process.
 */
function section(): unknown {
  const call = current!;
  call.watchdog.armSync();
  try {
    return call.fn();
  } finally {
    // the watchdog fired just before the disarm: its SIGINT is on the way, wait for the termination here
    if (!call.watchdog.disarmSync()) waitForTermination();
  }
}

function waitForTermination(): void {
  let last = clock();
  for (;;) {
    if (clock() - last > 1000) {
      last = clock();
      process.kill(process.pid, "SIGINT");
    }
  }
}

const globalName = `__xGuardRunSync_${randomUUID().replaceAll("-", "")}`;
let script: vm.Script | undefined;

function guardedScript(): vm.Script {
  if (script === undefined) {
    Object.defineProperty(globalThis, globalName, { value: section, enumerable: false });
    script = new vm.Script(`${globalName}()`, { filename: "process-guard:runSync" });
  }
  return script;
}

function unsupported(why: string): GuardError {
  return new GuardError(ErrorCode.UNSUPPORTED, `runSync is not supported ${why}`);
}

/** After a real Ctrl-C interrupted `fn`: hand it to the listeners, or let its default action happen. */
function redeliverSigint(): void {
  if (process.listenerCount("SIGINT") > 0) process.emit("SIGINT", "SIGINT");
  else process.kill(process.pid, "SIGINT");
}

/**
 * Runs synchronous `fn` on the main thread and interrupts it for real when it overruns: `while (true) {}`
 * included. Returns `fn`'s value; `fn`'s own exceptions propagate unchanged. An overrun throws
 * `ExecutionTimeout` or `MemoryLimitExceeded` (level 0, `cause` Node's `ERR_SCRIPT_EXECUTION_INTERRUPTED`);
 * `fn`'s `finally` blocks do not run then. Inside `fn`, `progress()` restarts the deadline.
 *
 * POSIX main thread only. About 50–100 µs per call; the first call also starts the watchdog worker.
 *
 * @param fn - the synchronous task
 * @param options - see {@link RunSyncOptions}: `timeoutMs` (default 60 000 ms), `checkIntervalMs` (default
 *   500 ms), `maxMemoryBytes` (default: no memory limit), `absolute` (default `true`)
 * @throws GuardError `ERR_X_GUARD_INVALID_OPTION` for a bad option, `ERR_X_GUARD_UNSUPPORTED` on Windows, in a
 *   worker thread or inside another `runSync` call
 *
 * @example
 * ```ts
 * const result = runSync(() => parseHugeDocument(text), { timeoutMs: 2_000, maxMemoryBytes: 512 * 1024 ** 2 });
 * ```
 */
export function runSync<R>(fn: () => R, options?: RunSyncOptions): R {
  const config = runSyncConfig(options);
  if (typeof fn !== "function") {
    throw new GuardError(
      ErrorCode.INVALID_OPTION,
      `invalid argument fn: ${String(fn)} (expected a function)`,
    );
  }
  if (process.platform === "win32") throw unsupported("on Windows");
  if (!isMainThread) throw unsupported("in a worker thread");
  if (current !== undefined) throw unsupported("inside another runSync call");

  const watchdog = Watchdog.shared(silentLogger);
  let limit = Number.NaN;
  if (config.maxBytes !== undefined) {
    limit = config.absolute ? config.maxBytes : process.memoryUsage.rss() + config.maxBytes;
  }
  watchdog.prepareSync(clock(), config.timeoutMs, limit, config.checkIntervalMs);
  const scope = new SyncScope(enclosing(), watchdog);
  const run = guardedScript();
  current = { fn, watchdog };
  try {
    return scopes().run(scope, () => run.runInThisContext({ breakOnSigint: true })) as R;
  } catch (error) {
    if (!isCode(error, "ERR_SCRIPT_EXECUTION_INTERRUPTED")) throw error;
    if (watchdog.syncState !== SyncState.FIRED) {
      process.nextTick(redeliverSigint);
      throw error;
    }
    const fired = watchdog.takeSyncFiring();
    if (fired.reason === SyncReason.MEMORY) {
      throw new MemoryLimitExceeded(
        { level: 0, limitBytes: limit, observedBytes: fired.observedBytes, metric: "rss" },
        { cause: error },
      );
    }
    throw new ExecutionTimeout(
      { level: 0, limitMs: config.timeoutMs, elapsedMs: fired.elapsedMs },
      { cause: error },
    );
  } finally {
    scope.ended = true;
    current = undefined;
  }
}
