import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { GuardError } from "./errors.js";
import { memGuard, timeGuard } from "./guard.js";
import { InterruptType, memConfig, runSyncConfig, timeConfig } from "./options.js";
import { runSync } from "./run-sync.js";

function caught(fn: () => unknown): GuardError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GuardError) return error;
    throw error;
  }
  throw new Error("expected a throw");
}

describe("InterruptType", () => {
  it("has the seed's three values", () => {
    expect(InterruptType.exception).toBe("exception");
    expect(InterruptType.signal).toBe("signal");
    expect(InterruptType.exception_then_signal).toBe("exception_then_signal");
  });
});

describe("timeGuard options", () => {
  it("defaults to the seed's: 60 s, 15 s grace, exception_then_signal, 500 ms checks", () => {
    const config = timeGuard().config;
    expect(config).toMatchObject({
      timeoutMs: 60_000,
      graceMs: 15_000,
      interruptType: "exception_then_signal",
      sendKill: false,
      checkInterval: 500,
      allowProcessSignals: false,
    });
  });

  it("takes seconds (fractions allowed) and lets the ms variant win when both are given", () => {
    expect(timeConfig({ timeout: 1.5, gracePeriod: 0.25 })).toMatchObject({ timeoutMs: 1_500, graceMs: 250 });
    expect(timeConfig({ timeout: 9, timeoutMs: 20, gracePeriod: 9, gracePeriodMs: 30 })).toMatchObject({
      timeoutMs: 20,
      graceMs: 30,
    });
    expect(timeConfig({ timeout: 0 }).timeoutMs).toBe(0);
  });

  it("floors the gap between levels at 10 ms, not one second (the seed's docs are wrong)", () => {
    expect(timeConfig({ gracePeriod: 0 }).graceMs).toBe(10);
    expect(timeConfig({ gracePeriodMs: 3 }).graceMs).toBe(10);
    expect(timeConfig({ gracePeriodMs: 11 }).graceMs).toBe(11);
  });

  it("treats a checkInterval below 1 as 1", () => {
    expect(timeConfig({ checkInterval: 0.2 }).checkInterval).toBe(1);
  });

  it.each([
    ["timeout", -1],
    ["timeout", Number.NaN],
    ["timeout", Number.POSITIVE_INFINITY],
    ["timeout", "5"],
    ["timeoutMs", -0.5],
    ["gracePeriod", Number.NEGATIVE_INFINITY],
    ["gracePeriodMs", null],
    ["checkInterval", 0],
    ["checkInterval", -3],
    ["interruptType", "kill"],
    ["sendKill", 1],
    ["allowProcessSignals", "yes"],
    ["logger", { info() {} }],
  ])("rejects %s: %s with ERR_X_GUARD_OPTIONS naming the option and the value", (name, value) => {
    const error = caught(() => timeGuard({ [name]: value } as never));
    expect(error.code).toBe("ERR_X_GUARD_OPTIONS");
    expect(XError.is(error, "ERR_X_GUARD_OPTIONS")).toBe(true);
    expect(error.message).toContain(`invalid option ${name}`);
    const shown = typeof value === "object" && value !== null ? "{" : String(value);
    expect(error.message).toContain(shown);
    expect(error.cause).toBeInstanceOf(ZodError);
  });

  it("says what is expected, in the seed's unit", () => {
    expect(caught(() => timeGuard({ timeout: -1 })).message).toBe(
      "invalid option timeout: -1 (expected a finite number of seconds ≥ 0)",
    );
  });

  it("rejects unknown names, such as snake_case ones ported from Python", () => {
    const error = caught(() => timeGuard({ timeout_ms: 5 } as never));
    expect(error.message).toContain("timeout_ms");
    expect(caught(() => timeGuard({ grace_period: 5 } as never)).message).toContain("grace_period");
  });

  it("counts undefined values as absent, unknown names included", () => {
    expect(timeConfig({ timeout: undefined, timeoutMs: undefined, interruptType: undefined })).toMatchObject({
      timeoutMs: 60_000,
      interruptType: "exception_then_signal",
    });
    expect(() => timeGuard({ timeout_ms: undefined } as never)).not.toThrow();
  });

  it("accepts any pino-shaped logger", () => {
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    expect(timeGuard({ logger }).config.logger).toBe(logger);
  });
});

describe("memGuard options", () => {
  it("requires maxMemory or maxMemoryBytes, naming maxMemory", () => {
    const error = caught(() => memGuard({}));
    expect(error.code).toBe("ERR_X_GUARD_OPTIONS");
    expect(error.message).toContain("maxMemory");
    expect(caught(() => memGuard(undefined as never)).message).toContain("maxMemory");
  });

  it("takes KiB (the seed's unit) or bytes, bytes winning", () => {
    expect(memConfig({ maxMemory: 50 * 1024 }).maxBytes).toBe(50 * 1024 * 1024);
    expect(memConfig({ maxMemory: 1, maxMemoryBytes: 7 }).maxBytes).toBe(7);
    expect(memConfig({ maxMemoryBytes: 0 }).maxBytes).toBe(0);
  });

  it("defaults: absolute, rss, no grace, 5 s secondary grace floored at 10 ms", () => {
    expect(memConfig({ maxMemory: 1 })).toMatchObject({
      absolute: true,
      metric: "rss",
      graceMs: 0,
      secondaryMs: 5_000,
      checkInterval: 500,
      interruptType: "exception_then_signal",
    });
    expect(memConfig({ maxMemory: 1, secondaryGracePeriod: 0 }).secondaryMs).toBe(10);
    expect(memConfig({ maxMemory: 1, gracePeriodMs: 3 }).graceMs).toBe(3); // no floor before level 0
    expect(memConfig({ maxMemory: 1, gracePeriod: 2, gracePeriodMs: 5 }).graceMs).toBe(5);
    expect(memConfig({ maxMemory: 1, secondaryGracePeriod: 2, secondaryGracePeriodMs: 50 }).secondaryMs).toBe(
      50,
    );
  });

  it.each([
    ["maxMemory", -1],
    ["maxMemoryBytes", Number.NaN],
    ["metric", "vsz"],
    ["absolute", "no"],
    ["secondaryGracePeriod", -2],
    ["secondaryGracePeriodMs", Number.POSITIVE_INFINITY],
  ])("rejects %s: %s", (name, value) => {
    const error = caught(() => memGuard({ maxMemory: 1, [name]: value } as never));
    expect(error.code).toBe("ERR_X_GUARD_OPTIONS");
    expect(error.message).toContain(name);
    expect(error.message).toContain(String(value));
  });

  it("rejects time-only names on a memory guard and memory-only names on a time guard", () => {
    expect(caught(() => memGuard({ maxMemory: 1, timeout: 1 } as never)).message).toContain("timeout");
    expect(caught(() => timeGuard({ maxMemory: 1 } as never)).message).toContain("maxMemory");
  });
});

describe("runSync options", () => {
  it("are validated like the guards', before fn runs", () => {
    let called = false;
    const error = caught(() =>
      runSync(
        () => {
          called = true;
        },
        { timeout: -1 },
      ),
    );
    expect(error.code).toBe("ERR_X_GUARD_OPTIONS");
    expect(called).toBe(false);
    expect(caught(() => runSync(() => 1, { interruptType: "signal" } as never)).message).toContain(
      "interruptType",
    );
  });

  it("normalise to ms and bytes", () => {
    expect(runSyncConfig({})).toEqual({
      timeoutMs: 60_000,
      checkInterval: 500,
      maxBytes: undefined,
      absolute: true,
    });
    expect(runSyncConfig({ timeout: 2, maxMemory: 3, absolute: false })).toEqual({
      timeoutMs: 2_000,
      checkInterval: 500,
      maxBytes: 3_072,
      absolute: false,
    });
    expect(runSyncConfig({ timeout: 2, timeoutMs: 5, maxMemory: 3, maxMemoryBytes: 9 })).toMatchObject({
      timeoutMs: 5,
      maxBytes: 9,
    });
  });
});
