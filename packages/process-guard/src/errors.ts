import { XError, type XErrorOptions } from "@x/core";

/** Every code a {@link GuardError} can carry. */
export const GuardErrorCode = {
  /** `progress()` or `currentSignal()` outside any active guard. */
  NO_CONTEXT: "ERR_X_GUARD_NO_CONTEXT",
  /** A combination this platform or target cannot do (`metric: "heap"` of a child, `runSync` in a worker, …). */
  UNSUPPORTED: "ERR_X_GUARD_UNSUPPORTED",
  /** A bad option or watch target. */
  OPTIONS: "ERR_X_GUARD_OPTIONS",
  /** {@link ExecutionTimeout}: the time limit was reached. */
  TIMEOUT: "ERR_X_GUARD_TIMEOUT",
  /** {@link MemoryLimitExceeded}: the memory limit was exceeded. */
  MEMORY: "ERR_X_GUARD_MEMORY",
} as const;

/**
 * The base class of every error of `@x/process-guard`, itself an `XError` of `@x/core`: test `code`, or use
 * `XError.is(error, code)` across duplicate installs.
 *
 * JavaScript has no `BaseException`: a bare `catch {}` swallows a guard's interrupt. Rethrow it:
 * `catch (e) { if (e instanceof GuardError) throw e; … }`.
 */
export class GuardError extends XError {}

/** Fields of an {@link ExecutionTimeout}. */
export interface ExecutionTimeoutInfo {
  /** Escalation level that produced the error: 0, 1 or 2. */
  level: 0 | 1 | 2;
  /** The time limit, in ms. */
  limit: number;
  /** Time since the activation's last (re)start when the level was sent, in ms. */
  elapsed: number;
}

/** The time limit of a TimeGuard (or of `runSync`) was reached. Code `ERR_X_GUARD_TIMEOUT`. */
export class ExecutionTimeout extends GuardError {
  /** Escalation level that produced the error: 0, 1 or 2. */
  readonly level: 0 | 1 | 2;
  /** The time limit, in ms. */
  readonly limit: number;
  /** Time since the activation's last (re)start when the level was sent, in ms. */
  readonly elapsed: number;

  /**
   * @param info - level, limit (ms) and elapsed time (ms)
   * @param options - `cause`, e.g. Node's `ERR_SCRIPT_EXECUTION_INTERRUPTED` for `runSync`
   */
  constructor(info: ExecutionTimeoutInfo, options?: XErrorOptions) {
    super(
      GuardErrorCode.TIMEOUT,
      `execution timed out: ${formatMs(info.elapsed)} since the last progress, limit ${formatMs(info.limit)} (level ${info.level})`,
      options,
    );
    this.level = info.level;
    this.limit = info.limit;
    this.elapsed = info.elapsed;
  }

  /** The same as {@link ExecutionTimeout.elapsed}, in ms. */
  get elapsedMs(): number {
    return this.elapsed;
  }
}

/** Which memory figure a MemGuard measures. */
export type MemoryMetric = "rss" | "heap" | "tree";

/** Fields of a {@link MemoryLimitExceeded}. */
export interface MemoryLimitExceededInfo {
  /** Escalation level that produced the error: 0, 1 or 2. */
  level: 0 | 1 | 2;
  /** The limit, in bytes (for `absolute: false`, the baseline plus the allowance). */
  limit: number;
  /** The sample that triggered the level, in bytes. */
  observed: number;
  /** What was measured. */
  metric: MemoryMetric;
}

/** The memory limit of a MemGuard (or of `runSync`) was exceeded. Code `ERR_X_GUARD_MEMORY`. */
export class MemoryLimitExceeded extends GuardError {
  /** Escalation level that produced the error: 0, 1 or 2. */
  readonly level: 0 | 1 | 2;
  /** The limit, in bytes. */
  readonly limit: number;
  /** The sample that triggered the level, in bytes. */
  readonly observed: number;
  /** What was measured: `"rss"`, `"heap"` or `"tree"`. */
  readonly metric: MemoryMetric;

  /**
   * @param info - level, limit (bytes), observed sample (bytes) and metric
   * @param options - `cause`
   */
  constructor(info: MemoryLimitExceededInfo, options?: XErrorOptions) {
    super(
      GuardErrorCode.MEMORY,
      `memory limit exceeded: ${info.metric} ${formatBytes(info.observed)} > limit ${formatBytes(info.limit)} (level ${info.level})`,
      options,
    );
    this.level = info.level;
    this.limit = info.limit;
    this.observed = info.observed;
    this.metric = info.metric;
  }
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
