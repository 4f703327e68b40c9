import { describe, expectTypeOf, it } from "vitest";
import {
  type ExecutionTimeout,
  type GuardError,
  type GuardEvents,
  type GuardedInterruptEvent,
  type GuardedLimit,
  type InterruptEvent,
  type InterruptMessage,
  type InterruptReason,
  type MemGuard,
  type MemoryLimitExceeded,
  runGuardedCommand,
  type TimeGuard,
  type WarningEvent,
} from "./index.js";

declare const time: TimeGuard;
declare const memory: MemGuard;

describe("GuardEvents", () => {
  it("maps exactly two events to one payload each", () => {
    expectTypeOf<keyof GuardEvents>().toEqualTypeOf<"interrupt" | "warning">();
    expectTypeOf<GuardEvents["interrupt"]>().toEqualTypeOf<[event: InterruptEvent<GuardError>]>();
    expectTypeOf<GuardEvents<ExecutionTimeout>["warning"]>().toEqualTypeOf<
      [event: WarningEvent<ExecutionTimeout>]
    >();
  });

  it("types the payloads: level, the guard's error, and what was done", () => {
    expectTypeOf<InterruptEvent>().toEqualTypeOf<{ level: 0 | 1 | 2; error: GuardError; action: string }>();
    expectTypeOf<WarningEvent>().toEqualTypeOf<{ level: 2; error: GuardError; message: string }>();
  });
});

describe("guard.on()", () => {
  it("infers a TimeGuard's listener parameters, with ExecutionTimeout as the error", () => {
    time.on("interrupt", (event) => {
      expectTypeOf(event).toEqualTypeOf<InterruptEvent<ExecutionTimeout>>();
      expectTypeOf(event.level).toEqualTypeOf<0 | 1 | 2>();
      expectTypeOf(event.error.elapsedMs).toEqualTypeOf<number>();
      expectTypeOf(event.action).toEqualTypeOf<string>();
    });
    time.on("warning", ({ level, error, message }) => {
      expectTypeOf(level).toEqualTypeOf<2>();
      expectTypeOf(error).toEqualTypeOf<ExecutionTimeout>();
      expectTypeOf(message).toEqualTypeOf<string>();
    });
  });

  it("infers a MemGuard's listener parameters, with MemoryLimitExceeded as the error", () => {
    memory.once("interrupt", ({ error }) => {
      expectTypeOf(error).toEqualTypeOf<MemoryLimitExceeded>();
      expectTypeOf(error.observedBytes).toEqualTypeOf<number>();
    });
    memory.on("warning", (event) => expectTypeOf(event).toEqualTypeOf<WarningEvent<MemoryLimitExceeded>>());
  });

  it("returns the guard itself for chaining", () => {
    expectTypeOf(time.on("interrupt", () => {})).toEqualTypeOf<TimeGuard>();
    expectTypeOf(memory.off("warning", () => {})).toEqualTypeOf<MemGuard>();
  });

  it("rejects an unknown event name", () => {
    // @ts-expect-error: there is no "timeout" event
    time.on("timeout", () => {});
    // @ts-expect-error: nor an "error" event
    memory.on("error", (error: Error) => void error);
  });

  it("rejects a listener of the wrong signature", () => {
    // @ts-expect-error: the payload is an event object, not a number
    time.on("interrupt", (level: number) => void level);
    // @ts-expect-error: a MemGuard's error is a MemoryLimitExceeded, not an ExecutionTimeout
    memory.on("interrupt", (event: InterruptEvent<ExecutionTimeout>) => void event);
    // @ts-expect-error: the warning's level is 2, its payload has no `action`
    time.on("warning", (event: InterruptEvent<ExecutionTimeout>) => void event);
    // @ts-expect-error: one payload only
    time.on("interrupt", (event: InterruptEvent<ExecutionTimeout>, extra: string) => void [event, extra]);
  });

  it("types emit() with the same map", () => {
    const error = {} as ExecutionTimeout;
    expectTypeOf(
      time.emit("interrupt", { level: 0, error, action: "aborted the signal" }),
    ).toEqualTypeOf<boolean>();
    // @ts-expect-error: the payload is required
    time.emit("interrupt");
    // @ts-expect-error: level 3 does not exist
    time.emit("interrupt", { level: 3, error, action: "x" });
  });
});

describe("runGuardedCommand's onInterrupt and the interrupt message", () => {
  it("passes a GuardedInterruptEvent that says which limit acted", () => {
    expectTypeOf<GuardedInterruptEvent>().toExtend<InterruptEvent>();
    expectTypeOf<GuardedInterruptEvent["limit"]>().toEqualTypeOf<GuardedLimit>();
    expectTypeOf<GuardedLimit>().toEqualTypeOf<"time" | "memory">();
    runGuardedCommand("true", [], {
      onInterrupt: (event) => {
        expectTypeOf(event).toEqualTypeOf<GuardedInterruptEvent>();
        expectTypeOf(event.level).toEqualTypeOf<0 | 1 | 2>();
      },
      onSpawn: (pid, child) => {
        expectTypeOf(pid).toEqualTypeOf<number>();
        expectTypeOf(child.pid).toEqualTypeOf<number | undefined>();
      },
    });
  });

  it("types the x-guard:interrupt message a child or worker receives", () => {
    expectTypeOf<InterruptMessage>().toEqualTypeOf<{
      type: "x-guard:interrupt";
      reason: InterruptReason;
      level: 0 | 1 | 2;
    }>();
    expectTypeOf<InterruptReason>().toEqualTypeOf<"timeout" | "memory">();
  });
});
