import type { ChildProcess } from "node:child_process";
import type { Worker } from "node:worker_threads";
import type { Logger } from "@x/core";
import { optionError } from "@x/core/internal";
import { Activation, type GuardHost } from "./activation.js";
import { ErrorCode, type ExecutionTimeout, GuardError } from "./errors.js";
import { optionsSignal } from "./options.js";
import { isAlive } from "./process-info.js";
import { type InterruptReason, ProcessTarget, type Target, WorkerTarget } from "./targets.js";
import { type Tickable, tickerFor } from "./ticker.js";

const { ChildProcess: ChildProcessClass } = process.getBuiltinModule("node:child_process");

/** What a watched target is. */
export type WatchTarget = ChildProcess | Worker | { pid: number };

/** Options of `watch()`. */
export interface WatchOptions {
  /** Aborting it acts as `close()`. */
  signal?: AbortSignal;
}

/** How a watched target ended. */
export interface WatchResult<E extends GuardError = GuardError> {
  /** Its exit code (`null` for a `{ pid }` target or after a signal). */
  code: number | null;
  /** The signal that ended it (`null` for a Worker or a `{ pid }` target). */
  signal: string | null;
  /** The error of the highest level the guard sent, or `null` when it did not act. */
  error: E | null;
}

/** `watch()`'s handle: a real promise of the result, plus `close()`. */
export type WatchHandle<E extends GuardError = GuardError> = Promise<WatchResult<E>> &
  AsyncDisposable & {
    /** Stops guarding without touching the target; idempotent. The promise still settles when it exits. */
    close(): Promise<void>;
  };

/** A TimeGuard's `watch()` handle. */
export type TimeWatchHandle = WatchHandle<ExecutionTimeout> & {
  /** Restarts the time limit. */
  progress(): void;
};

/** Polls a `{ pid }` target until it is gone, even after `close()` (the handle still settles then). */
class PidPoll implements Tickable {
  constructor(
    readonly pid: number,
    readonly intervalMs: number,
    readonly logger: Logger,
    readonly gone: () => void,
  ) {
    tickerFor(intervalMs).add(this);
  }

  tick(): void {
    if (isAlive(this.pid)) return;
    tickerFor(this.intervalMs).delete(this);
    this.gone();
  }
}

/** Which kind of target `target` is; throws `ERR_X_GUARD_INVALID_OPTION` for anything else. */
function classify(target: unknown): "child" | "worker" | "pid" {
  if (target instanceof ChildProcessClass) return "child";
  // node:worker_threads only for a target that is not a child: x-guard's path must not load it (startup)
  if (target instanceof process.getBuiltinModule("node:worker_threads").Worker) return "worker";
  if (typeof target === "object" && target !== null) {
    const pid = (target as { pid?: unknown }).pid;
    if (typeof pid === "number" && Number.isInteger(pid) && pid > 0) return "pid";
  }
  throw optionError(
    ErrorCode.INVALID_OPTION,
    "target",
    target,
    "a ChildProcess, a Worker or { pid: positive integer }",
    GuardError,
  );
}

/**
 * Guards another process or a worker for `guard`: the escalation ladder of the guard's `interruptType`, to
 * its process group when it leads one. The handle settles when the target exits; it never rejects for the
 * guard. `progress()` restarts the time limit of a TimeGuard's activation.
 *
 * @param guard - the guard whose configuration, events and activations it uses
 * @param reason - what the guard limits, carried by the `x-guard:interrupt` messages
 * @param target - a `ChildProcess`, a `Worker` or `{ pid }`
 * @param options - see {@link WatchOptions}
 * @throws `ERR_X_GUARD_INVALID_OPTION` for another target or a bad option
 */
export function watchTarget<E extends GuardError>(
  guard: GuardHost,
  reason: InterruptReason,
  target: WatchTarget,
  options?: WatchOptions,
): WatchHandle<E> & { progress(): void } {
  const kind = classify(target);
  const signal = optionsSignal(options, "options");
  const { config } = guard;
  let resolve!: (result: WatchResult<E>) => void;
  const promise = new Promise<WatchResult<E>>((done) => {
    resolve = done;
  });
  let activation: Activation | undefined;
  let closed = false;
  const close = (): Promise<void> => {
    closed = true;
    activation?.end();
    return Promise.resolve();
  };
  const handle = Object.assign(promise, {
    close,
    [Symbol.asyncDispose]: close, // `await using watched = guard.watch(child)`
    progress: (): void => activation?.progress(),
  });
  const result = (code: number | null, exitSignal: string | null): WatchResult<E> => ({
    code,
    signal: exitSignal,
    error: (activation?.topError ?? null) as E | null,
  });
  const start = (guardTarget: Target) =>
    new Activation(guard, {
      target: guardTarget,
      parent: undefined,
      signal,
      onExternal: "close",
      ownProcess: kind === "worker",
      onEnd: () => {
        if (signal?.aborted) closed = true;
      },
    });

  if (kind === "child") {
    const child = target as ChildProcess;
    if (child.pid === undefined) resolve(result(null, null));
    else if (child.exitCode !== null || child.signalCode !== null) {
      resolve(result(child.exitCode, child.signalCode));
    } else {
      const processTarget = new ProcessTarget(child.pid, child, reason, config);
      activation = start(processTarget);
      child.once("exit", (code, exitSignal) => {
        if (!closed) processTarget.sweep();
        activation!.end();
        resolve(result(code, exitSignal));
      });
    }
  } else if (kind === "worker") {
    const worker = target as Worker;
    if (worker.threadId === -1) resolve(result(null, null));
    else {
      activation = start(new WorkerTarget(worker, reason, config));
      worker.once("exit", (code) => {
        activation!.end();
        resolve(result(code, null));
      });
    }
  } else {
    const { pid } = target as { pid: number };
    if (!isAlive(pid)) resolve(result(null, null));
    else {
      const processTarget = new ProcessTarget(pid, undefined, reason, config);
      activation = start(processTarget);
      new PidPoll(pid, config.checkIntervalMs, config.logger, () => {
        if (!closed) processTarget.sweep();
        activation!.end();
        resolve(result(null, null));
      });
    }
  }
  return handle;
}
