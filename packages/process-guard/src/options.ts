import type { Logger } from "@x/core";
import {
  loggerOption,
  MAX_DURATION_MS,
  optionError,
  parseOptions,
  unknownOptionError,
  v,
} from "@x/core/internal";
import { ErrorCode, GuardError, type MemoryMetric } from "./errors.js";

/** How a guard interrupts: Resiliparse's three interrupt types. */
export const InterruptType = {
  /** Only the cooperative interrupt (abort, IPC message, worker message), at every level. */
  exception: "exception",
  /** Signals from level 0 on: SIGINT, then SIGTERM, then SIGTERM or SIGKILL. */
  signal: "signal",
  /** The cooperative interrupt first, then SIGINT, then SIGTERM or SIGKILL. The default. */
  exception_then_signal: "exception_then_signal",
} as const;

/** One of the {@link InterruptType} values. */
export type InterruptType = (typeof InterruptType)[keyof typeof InterruptType];

/** Options shared by {@link TimeGuardOptions} and {@link MemGuardOptions}. */
export interface CommonGuardOptions {
  /** How to interrupt; see the README's escalation matrix. Default `"exception_then_signal"`. */
  interruptType?: InterruptType;
  /** Level 2 sends SIGKILL instead of SIGTERM wherever it sends a signal. Default `false`. */
  sendKill?: boolean;
  /**
   * How often a MemGuard samples memory, and how often a `{ pid }` target is polled for its exit, in ms (values
   * below 1 act as 1). A time limit does not depend on it: each level is sent at its due time. Default 500 ms.
   */
  checkIntervalMs?: number;
  /** Allow signals to our own process (`process.pid`); without it none is ever sent. Default `false`. */
  allowProcessSignals?: boolean;
  /**
   * How long `run()` and wrapped calls wait for a task that ignores its signal. `false` (default): they reject
   * with the level-2 error when the ladder reaches level 2 before the task settles, and leave the task running,
   * as p-timeout does: every guarded call settles. `true`: they settle when the task settles, never earlier,
   * as in Resiliparse; a task that never settles keeps them pending, and the process alive, for ever.
   */
  waitForTask?: boolean;
  /** A pino-shaped logger (`debug`, `info`, `warn`, `error`). Default: silent. */
  logger?: Logger;
}

/** Options of `timeGuard()`. */
export interface TimeGuardOptions extends CommonGuardOptions {
  /**
   * Time limit, in ms, from the start or the last `progress()`; level 0 is sent when it has passed (within a
   * few ms, plus any event-loop delay). Default 60 000 ms (60 s). `0`: level 0 at once, after the task has
   * started.
   */
  timeoutMs?: number;
  /** Time between escalation levels, in ms. Default 15 000 ms (15 s); at least 10 ms is used. */
  gracePeriodMs?: number;
}

/** Options of `memGuard()`. */
export interface MemGuardOptions extends CommonGuardOptions {
  /** Memory limit, in bytes. Required. */
  maxMemoryBytes: number;
  /**
   * `true`: the limit is `maxMemoryBytes` itself; `false`: `maxMemoryBytes` above the first sample.
   * Default `true`.
   */
  absolute?: boolean;
  /** Time over the limit before level 0, in ms. Default 0 ms (at the first over-limit sample). */
  gracePeriodMs?: number;
  /** Time between later levels, in ms. Default 5 000 ms (5 s); at least 10 ms is used. */
  secondaryGracePeriodMs?: number;
  /** What is measured: `"rss"` (default), `"heap"` or `"tree"` (the process and all its descendants). */
  metric?: MemoryMetric;
}

/** Options of `runSync()`. */
export interface RunSyncOptions {
  /** Time limit, in ms. Default 60 000 ms (60 s). */
  timeoutMs?: number;
  /** How often the watchdog samples memory, in ms (values below 1 act as 1). Default 500 ms. */
  checkIntervalMs?: number;
  /** Optional limit on our process's RSS, in bytes. Default: none. */
  maxMemoryBytes?: number;
  /** As for `memGuard()`. Default `true`. */
  absolute?: boolean;
}

/** Validated, normalised configuration shared by both guard kinds: times in ms, memory in bytes. */
export interface CommonConfig {
  interruptType: InterruptType;
  sendKill: boolean;
  checkIntervalMs: number;
  allowProcessSignals: boolean;
  waitForTask: boolean;
  logger: Logger;
  /**
   * Not an option: set by `runGuardedCommand()` for `timeout(1)`'s ladder. The signal of each level to a
   * process target, one to three levels (the last one listed ends the ladder); it replaces `interruptType`'s.
   */
  ladder?: readonly (NodeJS.Signals | number)[];
  /**
   * Not an option: set by `runGuardedCommand()`, which knows how it started the command. `"group"`: a process
   * target leads a group of its own, and each signal goes to that group without reading `/proc` (which may
   * show another PID namespace), followed by SIGCONT so that a stopped group acts on it; `"process"`: each
   * signal goes to the target alone. Default: looked up at each signal.
   */
  targetGroup?: "group" | "process";
}

/** A TimeGuard's normalised configuration. */
export interface TimeConfig extends CommonConfig {
  kind: "time";
  timeoutMs: number;
  /** Gap between levels, floored at 10 ms. */
  graceMs: number;
}

/** A MemGuard's normalised configuration. */
export interface MemConfig extends CommonConfig {
  kind: "memory";
  maxBytes: number;
  absolute: boolean;
  /** Time over the limit before level 0, no floor. */
  graceMs: number;
  /** Gap between later levels, floored at 10 ms. */
  secondaryMs: number;
  metric: MemoryMetric;
}

/** `runSync`'s normalised configuration. */
export interface RunSyncConfig {
  timeoutMs: number;
  checkIntervalMs: number;
  maxBytes: number | undefined;
  absolute: boolean;
}

/**
 * The floor between escalation levels, in ms, as Resiliparse's code has it (its documentation's "one second"
 * is wrong).
 */
export const MIN_LEVEL_GAP_MS = 10;

// Schema fields and expected-value texts shared by the package's option schemas (guarded-command.ts too).

/** What a duration option in ms expects: no longer than a Node timer can wait (longer ones fire at once). */
const millis = `a number of milliseconds from 0 to ${MAX_DURATION_MS} (about 24.8 days)`;
/** What a size option in bytes expects. */
export const bytes = "a finite number of bytes ≥ 0";
/** A number ≥ 0 (v.number() rejects infinities), with `expected` as the message. */
export const nonNegative = (expected: string) => v.number({ error: expected }).min(0, { error: expected });
/** A duration in ms, from 0 to `MAX_DURATION_MS`: every duration option of the package. */
export const duration = nonNegative(millis).max(MAX_DURATION_MS, { error: millis });
/** A boolean option. */
export const bool = v.boolean({ error: "a boolean" });
const intervalText = `a number of milliseconds > 0, at most ${MAX_DURATION_MS}`;
/** A polling interval in ms, > 0 and at most `MAX_DURATION_MS`. */
export const interval = v
  .number({ error: intervalText })
  .gt(0, { error: intervalText })
  .max(MAX_DURATION_MS, { error: intervalText });
const interruptType = v.enum(["exception", "signal", "exception_then_signal"], {
  error: 'one of "exception", "signal", "exception_then_signal"',
});

const common = {
  interruptType: interruptType.optional(),
  sendKill: bool.optional(),
  checkIntervalMs: interval.optional(),
  allowProcessSignals: bool.optional(),
  waitForTask: bool.optional(),
  logger: loggerOption,
};

const timeSchema = v.strictObject({
  ...common,
  timeoutMs: duration.optional(),
  gracePeriodMs: duration.optional(),
});

const memSchema = v.strictObject({
  ...common,
  maxMemoryBytes: nonNegative(bytes),
  absolute: bool.optional(),
  gracePeriodMs: duration.optional(),
  secondaryGracePeriodMs: duration.optional(),
  metric: v.enum(["rss", "heap", "tree"], { error: 'one of "rss", "heap", "tree"' }).optional(),
});

const runSyncSchema = v.strictObject({
  timeoutMs: duration.optional(),
  checkIntervalMs: interval.optional(),
  maxMemoryBytes: nonNegative(bytes).optional(),
  absolute: bool.optional(),
});

/** Drops keys whose value is `undefined`: they count as absent, even unknown ones. */
function withoutUndefined(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (value !== undefined) out[key] = value;
  return out;
}

/** Validates `input` (keys whose value is `undefined` count as absent); throws `ERR_X_GUARD_INVALID_OPTION`. */
export function parse<S extends v.Schema<unknown>>(schema: S, input: unknown): v.Output<S> {
  return parseOptions(schema, withoutUndefined(input), ErrorCode.INVALID_OPTION, GuardError);
}

function commonConfig(o: v.Output<typeof timeSchema> | v.Output<typeof memSchema>): CommonConfig {
  return {
    interruptType: o.interruptType ?? InterruptType.exception_then_signal,
    sendKill: o.sendKill ?? false,
    checkIntervalMs: Math.max(1, o.checkIntervalMs ?? 500),
    allowProcessSignals: o.allowProcessSignals ?? false,
    waitForTask: o.waitForTask ?? false,
    logger: o.logger,
  };
}

/** Validates and normalises `timeGuard()` options; throws `ERR_X_GUARD_INVALID_OPTION`. */
export function timeConfig(input: unknown): TimeConfig {
  const o = parse(timeSchema, input);
  return {
    kind: "time",
    ...commonConfig(o),
    timeoutMs: o.timeoutMs ?? 60_000,
    graceMs: Math.max(MIN_LEVEL_GAP_MS, o.gracePeriodMs ?? 15_000),
  };
}

/** Validates and normalises `memGuard()` options; throws `ERR_X_GUARD_INVALID_OPTION`. */
export function memConfig(input: unknown): MemConfig {
  const o = parse(memSchema, input);
  return {
    kind: "memory",
    ...commonConfig(o),
    maxBytes: o.maxMemoryBytes,
    absolute: o.absolute ?? true,
    graceMs: o.gracePeriodMs ?? 0,
    secondaryMs: Math.max(MIN_LEVEL_GAP_MS, o.secondaryGracePeriodMs ?? 5_000),
    metric: o.metric ?? "rss",
  };
}

/** Validates and normalises `runSync()` options; throws `ERR_X_GUARD_INVALID_OPTION`. */
export function runSyncConfig(input: unknown): RunSyncConfig {
  const o = parse(runSyncSchema, input);
  return {
    timeoutMs: o.timeoutMs ?? 60_000,
    checkIntervalMs: Math.max(1, o.checkIntervalMs ?? 500),
    maxBytes: o.maxMemoryBytes,
    absolute: o.absolute ?? true,
  };
}

/**
 * Validates the options of `run()` or `watch()`, whose only option is `signal`, and returns that signal.
 * Keys whose value is `undefined` count as absent.
 *
 * @param options - the options argument, possibly `undefined`
 * @param where - the name of the argument, for the message when it is not an object
 * @throws `ERR_X_GUARD_INVALID_OPTION` for a non-object, an unknown option or a `signal` that is not an
 *   `AbortSignal`
 */
export function optionsSignal(options: unknown, where: string): AbortSignal | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== "object" || options === null) {
    throw optionError(ErrorCode.INVALID_OPTION, where, options, "an object", GuardError);
  }
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (key !== "signal") {
      throw unknownOptionError(ErrorCode.INVALID_OPTION, key, value, ["signal"], GuardError);
    }
    if (!(value instanceof AbortSignal)) {
      throw optionError(ErrorCode.INVALID_OPTION, "signal", value, "an AbortSignal", GuardError);
    }
  }
  return (options as { signal?: AbortSignal }).signal;
}
