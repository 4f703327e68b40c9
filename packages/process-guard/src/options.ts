import { type Logger, loggerOption, optionError, parseOptions } from "@x/core";
import { z } from "zod";
import { GuardError, GuardErrorCode, type MemoryMetric } from "./errors.js";

/** How a guard interrupts: the seed's three escalation strategies. */
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
  /** How often the guard looks, in ms (values below 1 act as 1). Default 500. */
  checkInterval?: number;
  /** Allow signals to our own process (`process.pid`); without it none is ever sent. Default `false`. */
  allowProcessSignals?: boolean;
  /** A pino-shaped logger (`debug`, `info`, `warn`, `error`). Default: silent. */
  logger?: Logger;
}

/** Options of `timeGuard()`. */
export interface TimeGuardOptions extends CommonGuardOptions {
  /** Time limit, in seconds (fractions allowed). Default 60. `0`: level 0 at the first check. */
  timeout?: number;
  /** Time limit, in ms; wins over `timeout` when given. */
  timeoutMs?: number;
  /** Time between escalation levels, in seconds. Default 15; at least 10 ms is used. */
  gracePeriod?: number;
  /** Time between escalation levels, in ms; wins over `gracePeriod` when given. At least 10 ms is used. */
  gracePeriodMs?: number;
}

/** Options of `memGuard()`. One of `maxMemory` and `maxMemoryBytes` is required. */
export interface MemGuardOptions extends CommonGuardOptions {
  /** Memory limit, in KiB (as the seed). */
  maxMemory?: number;
  /** Memory limit, in bytes; wins over `maxMemory` when given. */
  maxMemoryBytes?: number;
  /** `true`: the limit is `maxMemory` itself; `false`: `maxMemory` above the first sample. Default `true`. */
  absolute?: boolean;
  /** Time over the limit before level 0, in seconds. Default 0 (at the first over-limit sample). */
  gracePeriod?: number;
  /** Time over the limit before level 0, in ms; wins over `gracePeriod` when given. */
  gracePeriodMs?: number;
  /** Time between later levels, in seconds. Default 5; at least 10 ms is used. */
  secondaryGracePeriod?: number;
  /** Time between later levels, in ms; wins over `secondaryGracePeriod` when given. At least 10 ms is used. */
  secondaryGracePeriodMs?: number;
  /** What is measured: `"rss"` (default), `"heap"` or `"tree"` (the process and all its descendants). */
  metric?: MemoryMetric;
}

/** Options of `runSync()`. */
export interface RunSyncOptions {
  /** Time limit, in seconds. Default 60. */
  timeout?: number;
  /** Time limit, in ms; wins over `timeout` when given. */
  timeoutMs?: number;
  /** How often the watchdog samples memory, in ms. Default 500. */
  checkInterval?: number;
  /** Optional limit on our process's RSS, in KiB. */
  maxMemory?: number;
  /** Optional limit on our process's RSS, in bytes; wins over `maxMemory` when given. */
  maxMemoryBytes?: number;
  /** As for `memGuard()`. Default `true`. */
  absolute?: boolean;
}

/** Validated, normalised configuration shared by both guard kinds: times in ms, memory in bytes. */
export interface CommonConfig {
  interruptType: InterruptType;
  sendKill: boolean;
  checkInterval: number;
  allowProcessSignals: boolean;
  logger: Logger;
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
  checkInterval: number;
  maxBytes: number | undefined;
  absolute: boolean;
}

/** The floor between escalation levels, in ms (the seed's code; its docs' "one second" is wrong). */
export const MIN_LEVEL_GAP_MS = 10;

// Zod fields and expected-value texts shared by the package's option schemas (guarded-command.ts too).

/** What a duration option in seconds expects. */
export const seconds = "a finite number of seconds ≥ 0";
/** What a duration option in ms expects. */
export const millis = "a finite number of milliseconds ≥ 0";
/** A number ≥ 0 (zod 4 rejects infinities), with `expected` as the message. */
export const nonNegative = (expected: string) => z.number({ error: expected }).min(0, { error: expected });
/** A boolean option. */
export const bool = z.boolean({ error: "a boolean" });
/** A polling interval in ms, > 0. */
export const interval = z
  .number({ error: "a finite number of milliseconds > 0" })
  .gt(0, { error: "a finite number of milliseconds > 0" });
const interruptType = z.enum(["exception", "signal", "exception_then_signal"], {
  error: 'one of "exception", "signal", "exception_then_signal"',
});

const common = {
  interruptType: interruptType.optional(),
  sendKill: bool.optional(),
  checkInterval: interval.optional(),
  allowProcessSignals: bool.optional(),
  logger: loggerOption,
};

const timeSchema = z.strictObject({
  ...common,
  timeout: nonNegative(seconds).optional(),
  timeoutMs: nonNegative(millis).optional(),
  gracePeriod: nonNegative(seconds).optional(),
  gracePeriodMs: nonNegative(millis).optional(),
});

const memSchema = z.strictObject({
  ...common,
  maxMemory: nonNegative("a finite number of KiB ≥ 0").optional(),
  maxMemoryBytes: nonNegative("a finite number of bytes ≥ 0").optional(),
  absolute: bool.optional(),
  gracePeriod: nonNegative(seconds).optional(),
  gracePeriodMs: nonNegative(millis).optional(),
  secondaryGracePeriod: nonNegative(seconds).optional(),
  secondaryGracePeriodMs: nonNegative(millis).optional(),
  metric: z.enum(["rss", "heap", "tree"], { error: 'one of "rss", "heap", "tree"' }).optional(),
});

const runSyncSchema = z.strictObject({
  timeout: nonNegative(seconds).optional(),
  timeoutMs: nonNegative(millis).optional(),
  checkInterval: interval.optional(),
  maxMemory: nonNegative("a finite number of KiB ≥ 0").optional(),
  maxMemoryBytes: nonNegative("a finite number of bytes ≥ 0").optional(),
  absolute: bool.optional(),
});

/** Drops keys whose value is `undefined`: they count as absent, even unknown ones. */
function withoutUndefined(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (value !== undefined) out[key] = value;
  return out;
}

/** Validates `input` (keys whose value is `undefined` count as absent); throws `ERR_X_GUARD_OPTIONS`. */
export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  return parseOptions(schema, withoutUndefined(input), GuardErrorCode.OPTIONS, GuardError);
}

/** Picks the ms variant when given, else the seconds variant × 1000, else the default (ms). */
function ms(msValue: number | undefined, secondsValue: number | undefined, fallbackMs: number): number {
  if (msValue !== undefined) return msValue;
  if (secondsValue !== undefined) return secondsValue * 1000;
  return fallbackMs;
}

function commonConfig(o: z.output<typeof timeSchema> | z.output<typeof memSchema>): CommonConfig {
  return {
    interruptType: o.interruptType ?? InterruptType.exception_then_signal,
    sendKill: o.sendKill ?? false,
    checkInterval: Math.max(1, o.checkInterval ?? 500),
    allowProcessSignals: o.allowProcessSignals ?? false,
    logger: o.logger,
  };
}

/** Validates and normalises `timeGuard()` options; throws `ERR_X_GUARD_OPTIONS`. */
export function timeConfig(input: unknown): TimeConfig {
  const o = parse(timeSchema, input);
  return {
    kind: "time",
    ...commonConfig(o),
    timeoutMs: ms(o.timeoutMs, o.timeout, 60_000),
    graceMs: Math.max(MIN_LEVEL_GAP_MS, ms(o.gracePeriodMs, o.gracePeriod, 15_000)),
  };
}

function maxBytes(o: { maxMemory?: number | undefined; maxMemoryBytes?: number | undefined }) {
  if (o.maxMemoryBytes !== undefined) return o.maxMemoryBytes;
  if (o.maxMemory !== undefined) return o.maxMemory * 1024;
  return undefined;
}

/** Validates and normalises `memGuard()` options; throws `ERR_X_GUARD_OPTIONS`. */
export function memConfig(input: unknown): MemConfig {
  const o = parse(memSchema, input);
  const max = maxBytes(o);
  if (max === undefined) {
    throw optionError(
      GuardErrorCode.OPTIONS,
      "maxMemory",
      undefined,
      "maxMemory (KiB) or maxMemoryBytes (bytes): one of the two is required",
      GuardError,
    );
  }
  return {
    kind: "memory",
    ...commonConfig(o),
    maxBytes: max,
    absolute: o.absolute ?? true,
    graceMs: ms(o.gracePeriodMs, o.gracePeriod, 0),
    secondaryMs: Math.max(MIN_LEVEL_GAP_MS, ms(o.secondaryGracePeriodMs, o.secondaryGracePeriod, 5_000)),
    metric: o.metric ?? "rss",
  };
}

/** Validates and normalises `runSync()` options; throws `ERR_X_GUARD_OPTIONS`. */
export function runSyncConfig(input: unknown): RunSyncConfig {
  const o = parse(runSyncSchema, input);
  return {
    timeoutMs: ms(o.timeoutMs, o.timeout, 60_000),
    checkInterval: Math.max(1, o.checkInterval ?? 500),
    maxBytes: maxBytes(o),
    absolute: o.absolute ?? true,
  };
}
