import { XError } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import type * as api from "./index.js";
import {
  ErrorCode,
  ExecutionTimeout,
  type ExecutionTimeoutInfo,
  GuardError,
  GuardedExitCode,
  InterruptType,
  type Level,
  MemoryLimitExceeded,
  type MemoryLimitExceededInfo,
  type MemoryMetric,
} from "./index.js";

describe("ErrorCode", () => {
  it("holds literal ERR_X_GUARD_… strings", () => {
    expectTypeOf(ErrorCode).toEqualTypeOf<{
      readonly NO_CONTEXT: "ERR_X_GUARD_NO_CONTEXT";
      readonly UNSUPPORTED: "ERR_X_GUARD_UNSUPPORTED";
      readonly INVALID_OPTION: "ERR_X_GUARD_INVALID_OPTION";
      readonly TIMEOUT: "ERR_X_GUARD_TIMEOUT";
      readonly MEMORY: "ERR_X_GUARD_MEMORY";
    }>();
  });

  it("is also the union type of those codes", () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<
      | "ERR_X_GUARD_NO_CONTEXT"
      | "ERR_X_GUARD_UNSUPPORTED"
      | "ERR_X_GUARD_INVALID_OPTION"
      | "ERR_X_GUARD_TIMEOUT"
      | "ERR_X_GUARD_MEMORY"
    >();
    expectTypeOf<ErrorCode>().toExtend<`ERR_X_GUARD_${string}`>();
    // @ts-expect-error: the pre-release `ERR_X_GUARD_OPTIONS` is gone
    const old: ErrorCode = "ERR_X_GUARD_OPTIONS";
    void old;
  });

  it("replaces the removed exports", () => {
    expectTypeOf<typeof api>().not.toHaveProperty("GuardErrorCode");
    expectTypeOf<typeof api>().toHaveProperty("ErrorCode");
  });
});

describe("error classes", () => {
  it("derive from XError through GuardError", () => {
    expectTypeOf<GuardError>().toExtend<XError>();
    expectTypeOf<ExecutionTimeout>().toExtend<GuardError>();
    expectTypeOf<MemoryLimitExceeded>().toExtend<GuardError>();
    expectTypeOf<GuardError>().toHaveProperty("code").toEqualTypeOf<string>();
    expectTypeOf(GuardError).toBeConstructibleWith(ErrorCode.INVALID_OPTION, "message");
    expectTypeOf(GuardError).toBeConstructibleWith(ErrorCode.INVALID_OPTION, "message", {
      cause: new Error(),
    });
  });

  it("ExecutionTimeout carries its level and its times in ms", () => {
    expectTypeOf<ExecutionTimeout["level"]>().toEqualTypeOf<0 | 1 | 2>();
    expectTypeOf<ExecutionTimeout["limitMs"]>().toEqualTypeOf<number>();
    expectTypeOf<ExecutionTimeout["elapsedMs"]>().toEqualTypeOf<number>();
    // The pre-release names in seconds are gone.
    expectTypeOf<ExecutionTimeout>().not.toHaveProperty("elapsed");
    expectTypeOf<ExecutionTimeout>().not.toHaveProperty("limit");
    expectTypeOf<ExecutionTimeoutInfo>().toEqualTypeOf<{
      level: Level;
      limitMs: number;
      elapsedMs: number;
      taskLeftRunning?: boolean;
    }>();
    expectTypeOf(ExecutionTimeout).toBeConstructibleWith({ level: 0, limitMs: 10, elapsedMs: 12 });
    // @ts-expect-error: there is no level 3
    new ExecutionTimeout({ level: 3, limitMs: 10, elapsedMs: 12 });
  });

  it("MemoryLimitExceeded carries its level, its sizes in bytes and the metric", () => {
    expectTypeOf<MemoryLimitExceeded["level"]>().toEqualTypeOf<0 | 1 | 2>();
    expectTypeOf<MemoryLimitExceeded["limitBytes"]>().toEqualTypeOf<number>();
    expectTypeOf<MemoryLimitExceeded["observedBytes"]>().toEqualTypeOf<number>();
    expectTypeOf<MemoryLimitExceeded["metric"]>().toEqualTypeOf<MemoryMetric>();
    expectTypeOf<MemoryLimitExceeded>().not.toHaveProperty("observed");
    expectTypeOf<MemoryLimitExceeded>().not.toHaveProperty("limit");
    expectTypeOf<MemoryLimitExceededInfo>().toEqualTypeOf<{
      level: Level;
      limitBytes: number;
      observedBytes: number;
      metric: MemoryMetric;
      taskLeftRunning?: boolean;
    }>();
  });

  it("makes the fields read-only", () => {
    const error = new ExecutionTimeout({ level: 0, limitMs: 10, elapsedMs: 12 });
    // @ts-expect-error: readonly
    error.elapsedMs = 0;
    const memory = new MemoryLimitExceeded({ level: 1, limitBytes: 1, observedBytes: 2, metric: "rss" });
    // @ts-expect-error: readonly
    memory.limitBytes = 0;
  });

  it("narrows through instanceof and XError.is", () => {
    const caught: unknown = undefined;
    if (caught instanceof ExecutionTimeout) expectTypeOf(caught.elapsedMs).toEqualTypeOf<number>();
    if (XError.is(caught, ErrorCode.TIMEOUT)) expectTypeOf(caught).toEqualTypeOf<XError>();
  });
});

describe("other constant objects", () => {
  it("GuardedExitCode holds timeout(1)'s literal statuses", () => {
    expectTypeOf(GuardedExitCode).toEqualTypeOf<{
      readonly TIMEOUT: 124;
      readonly MEMORY: 125;
      readonly CANNOT_RUN: 126;
      readonly NOT_FOUND: 127;
    }>();
  });

  it("InterruptType is both the object and the union of its values", () => {
    expectTypeOf(InterruptType.exception_then_signal).toEqualTypeOf<"exception_then_signal">();
    expectTypeOf<InterruptType>().toEqualTypeOf<"exception" | "signal" | "exception_then_signal">();
  });

  it("Level is the three escalation levels", () => {
    expectTypeOf<Level>().toEqualTypeOf<0 | 1 | 2>();
  });
});
