import type { Logger } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import {
  type CommonGuardOptions,
  type ForwardedSignal,
  type ForwardSignalsOptions,
  type GuardedCommandOptions,
  InterruptType,
  type MemGuardOptions,
  type MemoryMetric,
  memGuard,
  type RunOptions,
  type RunSyncOptions,
  runGuardedCommand,
  runSync,
  type TimeGuardOptions,
  timeGuard,
  type WatchOptions,
} from "./index.js";

/** The option names that end in `Ms` (durations) or `Bytes` (sizes). */
type MsKeys<T> = Extract<keyof T, `${string}Ms`>;
type BytesKeys<T> = Extract<keyof T, `${string}Bytes`>;

describe("option names and units", () => {
  it("lists exactly the documented options of each guard", () => {
    // Pinning the key sets: a new option spelled without its unit (or a revived old name) fails here.
    expectTypeOf<keyof CommonGuardOptions>().toEqualTypeOf<
      "interruptType" | "sendKill" | "checkIntervalMs" | "allowProcessSignals" | "waitForTask" | "logger"
    >();
    expectTypeOf<keyof TimeGuardOptions>().toEqualTypeOf<
      keyof CommonGuardOptions | "timeoutMs" | "gracePeriodMs"
    >();
    expectTypeOf<keyof MemGuardOptions>().toEqualTypeOf<
      | keyof CommonGuardOptions
      | "maxMemoryBytes"
      | "absolute"
      | "gracePeriodMs"
      | "secondaryGracePeriodMs"
      | "metric"
    >();
    expectTypeOf<keyof RunSyncOptions>().toEqualTypeOf<
      "timeoutMs" | "checkIntervalMs" | "maxMemoryBytes" | "absolute"
    >();
    expectTypeOf<keyof GuardedCommandOptions>().toEqualTypeOf<
      | "timeoutMs"
      | "maxMemoryBytes"
      | "gracePeriodMs"
      | "sendKill"
      | "killSignal"
      | "killAfterMs"
      | "processGroup"
      | "ignoredSignals"
      | "progressOnOutput"
      | "reaper"
      | "stdio"
      | "env"
      | "cwd"
      | "signal"
      | "onSpawn"
      | "onInterrupt"
      | "checkIntervalMs"
      | "logger"
      | "forwardSignals"
    >();
    expectTypeOf<GuardedCommandOptions["forwardSignals"]>().toEqualTypeOf<
      boolean | readonly ForwardedSignal[] | undefined
    >();
    expectTypeOf<keyof ForwardSignalsOptions>().toEqualTypeOf<"signals">();
    expectTypeOf<keyof RunOptions>().toEqualTypeOf<"signal">();
    expectTypeOf<keyof WatchOptions>().toEqualTypeOf<"signal">();
  });

  it("types every duration (…Ms) and every size (…Bytes) as a plain number", () => {
    // `Required<T>[K]` drops the `undefined` of optional keys, so these are exactly `number`.
    expectTypeOf<MsKeys<TimeGuardOptions>>().toEqualTypeOf<
      "checkIntervalMs" | "timeoutMs" | "gracePeriodMs"
    >();
    expectTypeOf<Required<TimeGuardOptions>[MsKeys<TimeGuardOptions>]>().toEqualTypeOf<number>();

    expectTypeOf<MsKeys<MemGuardOptions>>().toEqualTypeOf<
      "checkIntervalMs" | "gracePeriodMs" | "secondaryGracePeriodMs"
    >();
    expectTypeOf<Required<MemGuardOptions>[MsKeys<MemGuardOptions>]>().toEqualTypeOf<number>();
    expectTypeOf<BytesKeys<MemGuardOptions>>().toEqualTypeOf<"maxMemoryBytes">();
    expectTypeOf<MemGuardOptions["maxMemoryBytes"]>().toEqualTypeOf<number>();

    expectTypeOf<Required<RunSyncOptions>[MsKeys<RunSyncOptions>]>().toEqualTypeOf<number>();
    expectTypeOf<Required<RunSyncOptions>[BytesKeys<RunSyncOptions>]>().toEqualTypeOf<number>();

    expectTypeOf<MsKeys<GuardedCommandOptions>>().toEqualTypeOf<
      "timeoutMs" | "gracePeriodMs" | "killAfterMs" | "checkIntervalMs"
    >();
    expectTypeOf<Required<GuardedCommandOptions>[MsKeys<GuardedCommandOptions>]>().toEqualTypeOf<number>();
    expectTypeOf<Required<GuardedCommandOptions>[BytesKeys<GuardedCommandOptions>]>().toEqualTypeOf<number>();
  });

  it("types the non-numeric options precisely", () => {
    expectTypeOf<CommonGuardOptions["interruptType"]>().toEqualTypeOf<
      "exception" | "signal" | "exception_then_signal" | undefined
    >();
    expectTypeOf<CommonGuardOptions["logger"]>().toEqualTypeOf<Logger | undefined>();
    expectTypeOf<CommonGuardOptions["sendKill"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<MemGuardOptions["metric"]>().toEqualTypeOf<MemoryMetric | undefined>();
    expectTypeOf<MemoryMetric>().toEqualTypeOf<"rss" | "heap" | "tree">();
    expectTypeOf<RunOptions["signal"]>().toEqualTypeOf<AbortSignal | undefined>();
  });
});

describe("required and optional options", () => {
  it("lets timeGuard() go without options, every option being optional", () => {
    expectTypeOf(timeGuard).toBeCallableWith();
    expectTypeOf(timeGuard).toBeCallableWith({});
    expectTypeOf(timeGuard).toBeCallableWith({
      timeoutMs: 2_000,
      gracePeriodMs: 5_000,
      checkIntervalMs: 100,
      interruptType: InterruptType.signal,
      sendKill: true,
      allowProcessSignals: false,
    });
  });

  it("requires maxMemoryBytes for memGuard()", () => {
    expectTypeOf(memGuard).toBeCallableWith({ maxMemoryBytes: 512 * 1024 ** 2 });
    expectTypeOf(memGuard).toBeCallableWith({ maxMemoryBytes: 1, metric: "tree", absolute: false });
    // @ts-expect-error: the options object is required
    memGuard();
    // @ts-expect-error: maxMemoryBytes is required
    memGuard({});
    // @ts-expect-error: maxMemoryBytes is required
    memGuard({ metric: "rss" });
  });

  it("accepts only the documented values of enumerations", () => {
    // @ts-expect-error: not an InterruptType
    timeGuard({ interruptType: "kill" });
    // @ts-expect-error: not a MemoryMetric
    memGuard({ maxMemoryBytes: 1, metric: "vms" });
    // @ts-expect-error: a duration is a number of ms, never a string
    timeGuard({ timeoutMs: "2s" });
  });

  it("lets runSync() and runGuardedCommand() go without options", () => {
    expectTypeOf(runSync<number>).toBeCallableWith(() => 1);
    expectTypeOf(runSync<number>).toBeCallableWith(() => 1, { timeoutMs: 200, maxMemoryBytes: 1024 });
    expectTypeOf(runGuardedCommand).toBeCallableWith("true", []);
    expectTypeOf(runGuardedCommand).toBeCallableWith("sleep", ["1"], {
      timeoutMs: 1_000,
      maxMemoryBytes: 1024 ** 3,
      stdio: "inherit",
      signal: AbortSignal.timeout(1),
    });
  });
});

describe("removed spellings", () => {
  it("rejects the old names of timeGuard()", () => {
    // @ts-expect-error: `timeout` (seconds) became `timeoutMs`
    timeGuard({ timeout: 5 });
    // @ts-expect-error: `gracePeriod` (seconds) became `gracePeriodMs`
    timeGuard({ gracePeriod: 5 });
    // @ts-expect-error: `checkInterval` became `checkIntervalMs`
    timeGuard({ checkInterval: 500 });
    // @ts-expect-error: Python's snake case is not accepted either
    timeGuard({ timeout_ms: 5_000 });
  });

  it("rejects the old names of memGuard()", () => {
    // @ts-expect-error: `maxMemory` (KiB) became `maxMemoryBytes`
    memGuard({ maxMemory: 1 });
    // @ts-expect-error: `secondaryGracePeriod` (seconds) became `secondaryGracePeriodMs`
    memGuard({ maxMemoryBytes: 1, secondaryGracePeriod: 5 });
    // @ts-expect-error: `gracePeriod` (seconds) became `gracePeriodMs`
    memGuard({ maxMemoryBytes: 1, gracePeriod: 0 });
  });

  it("rejects the old names of runSync() and runGuardedCommand()", () => {
    // @ts-expect-error: `timeout` became `timeoutMs`
    runSync(() => 1, { timeout: 1 });
    // @ts-expect-error: `maxMemory` became `maxMemoryBytes`
    runSync(() => 1, { maxMemory: 1 });
    // @ts-expect-error: `timeout` became `timeoutMs`
    runGuardedCommand("true", [], { timeout: 1 });
    // @ts-expect-error: `maxMemory` became `maxMemoryBytes`
    runGuardedCommand("true", [], { maxMemory: 1 });
  });

  it("takes nothing but a signal in run() and watch() options", () => {
    const guard = timeGuard();
    // @ts-expect-error: run() has no per-call timeout
    guard.run(() => 1, { timeoutMs: 1 });
    // @ts-expect-error: watch() has no per-call options besides `signal`
    guard.watch({ pid: 1 }, { checkIntervalMs: 1 });
  });
});
