import { XError, type XErrorOptions } from "@x/core";

/** The stable error codes of `@x/process-guard`: every code a {@link GuardError} can carry. */
export const ErrorCode = {
  /** `progress()` or `currentSignal()` outside any active guard. */
  NO_CONTEXT: "ERR_X_GUARD_NO_CONTEXT",
  /** A combination this platform or target cannot do (`metric: "heap"` of a child, `runSync` in a worker, …). */
  UNSUPPORTED: "ERR_X_GUARD_UNSUPPORTED",
  /** A bad option, argument or watch target; the message names it, its value and what was expected. */
  INVALID_OPTION: "ERR_X_GUARD_INVALID_OPTION",
  /** {@link ExecutionTimeout}: the time limit was reached. */
  TIMEOUT: "ERR_X_GUARD_TIMEOUT",
  /** {@link MemoryLimitExceeded}: the memory limit was exceeded. */
  MEMORY: "ERR_X_GUARD_MEMORY",
} as const;

/** One of the codes of {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * The base class of every error of `@x/process-guard`, itself an `XError` of `@x/core`: test `code`, or use
 * `XError.is(error, code)` across duplicate installs.
 *
 * JavaScript has no `BaseException`: a bare `catch {}` swallows a guard's interrupt. Rethrow it with
 * `isInterrupt`, not `instanceof`: `catch (e) { if (isInterrupt(e)) throw e; … }`. Most APIs that take a
 * signal (`timers/promises`, `events.once`, streams, `child_process`) reject with an `AbortError` whose
 * `cause` is the guard's error; only `fetch` rejects with the guard's error itself.
 */
export class GuardError extends XError {
  override name = "GuardError";
}

/** Fields of an {@link ExecutionTimeout}. */
export interface ExecutionTimeoutInfo {
  /** Escalation level that produced the error: 0, 1 or 2. */
  level: 0 | 1 | 2;
  /** The time limit, in ms. */
  limitMs: number;
  /** Time since the activation's last (re)start when the level was sent, in ms. */
  elapsedMs: number;
  /** `run()` rejected with this error and left its task running (see {@link GuardError}). Default `false`. */
  taskLeftRunning?: boolean;
}

/** The time limit of a TimeGuard (or of `runSync`) was reached. Code `ERR_X_GUARD_TIMEOUT`. */
export class ExecutionTimeout extends GuardError {
  override name = "ExecutionTimeout";
  /** Escalation level that produced the error: 0, 1 or 2. */
  readonly level: 0 | 1 | 2;
  /** The time limit, in ms. */
  readonly limitMs: number;
  /** Time since the activation's last (re)start when the level was sent, in ms. */
  readonly elapsedMs: number;
  /** `run()` (or a wrapped call) rejected with this level-2 error while its task, ignoring its signal, ran on. */
  readonly taskLeftRunning: boolean;

  /**
   * @param info - level, limit (ms) and elapsed time (ms)
   * @param options - `cause`, e.g. Node's `ERR_SCRIPT_EXECUTION_INTERRUPTED` for `runSync`
   */
  constructor(info: ExecutionTimeoutInfo, options?: XErrorOptions) {
    super(
      ErrorCode.TIMEOUT,
      `execution timed out: ${formatMs(info.elapsedMs)} since the last progress, limit ${formatMs(info.limitMs)} (level ${info.level})${leftRunning(info)}`,
      options,
    );
    this.level = info.level;
    this.limitMs = info.limitMs;
    this.elapsedMs = info.elapsedMs;
    this.taskLeftRunning = info.taskLeftRunning ?? false;
  }
}

/** Which memory figure a MemGuard measures. */
export type MemoryMetric = "rss" | "heap" | "tree";

/** Fields of a {@link MemoryLimitExceeded}. */
export interface MemoryLimitExceededInfo {
  /** Escalation level that produced the error: 0, 1 or 2. */
  level: 0 | 1 | 2;
  /** The limit, in bytes (for `absolute: false`, the baseline plus the allowance). */
  limitBytes: number;
  /** The sample that triggered the level, in bytes. */
  observedBytes: number;
  /** What was measured. */
  metric: MemoryMetric;
  /** `run()` rejected with this error and left its task running (see {@link GuardError}). Default `false`. */
  taskLeftRunning?: boolean;
}

/** The memory limit of a MemGuard (or of `runSync`) was exceeded. Code `ERR_X_GUARD_MEMORY`. */
export class MemoryLimitExceeded extends GuardError {
  override name = "MemoryLimitExceeded";
  /** Escalation level that produced the error: 0, 1 or 2. */
  readonly level: 0 | 1 | 2;
  /** The limit, in bytes (for `absolute: false`, the baseline plus the allowance). */
  readonly limitBytes: number;
  /** The sample that triggered the level, in bytes. */
  readonly observedBytes: number;
  /** What was measured: `"rss"`, `"heap"` or `"tree"`. */
  readonly metric: MemoryMetric;
  /** `run()` (or a wrapped call) rejected with this level-2 error while its task, ignoring its signal, ran on. */
  readonly taskLeftRunning: boolean;

  /**
   * @param info - level, limit (bytes), observed sample (bytes) and metric
   * @param options - `cause`
   */
  constructor(info: MemoryLimitExceededInfo, options?: XErrorOptions) {
    super(
      ErrorCode.MEMORY,
      `memory limit exceeded: ${info.metric} ${formatBytes(info.observedBytes)} > limit ${formatBytes(info.limitBytes)} (level ${info.level})${leftRunning(info)}`,
      options,
    );
    this.level = info.level;
    this.limitBytes = info.limitBytes;
    this.observedBytes = info.observedBytes;
    this.metric = info.metric;
    this.taskLeftRunning = info.taskLeftRunning ?? false;
  }
}

/** The end of a message whose `run()` gave up waiting for its task. */
function leftRunning(info: { taskLeftRunning?: boolean }): string {
  return info.taskLeftRunning ? "; the task ignored its signal and is left running" : "";
}

/** `1500 ms` or `2.5 s`, for messages. */
export function formatMs(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** `512 B`, `12.0 KiB`, `1.5 GiB`, for messages. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}
