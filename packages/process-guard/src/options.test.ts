import { XError } from "@x/core";
import { v } from "@x/core/internal";
import { describe, expect, it } from "vitest";
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
  it("has Resiliparse's three values", () => {
    expect(InterruptType.exception).toBe("exception");
    expect(InterruptType.signal).toBe("signal");
    expect(InterruptType.exception_then_signal).toBe("exception_then_signal");
  });
});

describe("timeGuard options", () => {
  it("defaults to Resiliparse's, in ms: 60 s, 15 s grace, exception_then_signal, 500 ms checks", () => {
    const config = timeGuard().config;
    expect(config).toMatchObject({
      timeoutMs: 60_000,
      graceMs: 15_000,
      interruptType: "exception_then_signal",
      sendKill: false,
      checkIntervalMs: 500,
      allowProcessSignals: false,
    });
  });

  it("takes ms (fractions allowed)", () => {
    expect(timeConfig({ timeoutMs: 1_500.5, gracePeriodMs: 250 })).toMatchObject({
      timeoutMs: 1_500.5,
      graceMs: 250,
    });
    expect(timeConfig({ timeoutMs: 0 }).timeoutMs).toBe(0);
  });

  it("floors the gap between levels at 10 ms, not one second (Resiliparse's documentation is wrong)", () => {
    expect(timeConfig({ gracePeriodMs: 0 }).graceMs).toBe(10);
    expect(timeConfig({ gracePeriodMs: 3 }).graceMs).toBe(10);
    expect(timeConfig({ gracePeriodMs: 11 }).graceMs).toBe(11);
  });

  it("treats a checkIntervalMs below 1 as 1", () => {
    expect(timeConfig({ checkIntervalMs: 0.2 }).checkIntervalMs).toBe(1);
  });

  it.each([
    ["timeoutMs", -1],
    ["timeoutMs", Number.NaN],
    ["timeoutMs", Number.POSITIVE_INFINITY],
    ["timeoutMs", "5"],
    ["gracePeriodMs", Number.NEGATIVE_INFINITY],
    ["gracePeriodMs", null],
    ["checkIntervalMs", 0],
    ["checkIntervalMs", -3],
    ["interruptType", "kill"],
    ["sendKill", 1],
    ["allowProcessSignals", "yes"],
    ["logger", { info() {} }],
  ])("rejects %s: %s with ERR_X_GUARD_INVALID_OPTION naming the option and the value", (name, value) => {
    const error = caught(() => timeGuard({ [name]: value } as never));
    expect(error.code).toBe("ERR_X_GUARD_INVALID_OPTION");
    expect(XError.is(error, "ERR_X_GUARD_INVALID_OPTION")).toBe(true);
    expect(error.message).toContain(`invalid option ${name}`);
    const shown = typeof value === "object" && value !== null ? "{" : String(value);
    expect(error.message).toContain(shown);
    expect(error.cause).toBeInstanceOf(v.SchemaError);
  });

  it("says what is expected, with its unit", () => {
    expect(caught(() => timeGuard({ timeoutMs: -1 })).message).toBe(
      "invalid option timeoutMs: -1 (expected a number of milliseconds from 0 to 2147483647 (about 24.8 days))",
    );
  });

  it("refuses durations beyond the longest Node timer (2³¹ − 1 ms), which would fire at once", () => {
    expect(timeConfig({ timeoutMs: 2 ** 31 - 1, gracePeriodMs: 2 ** 31 - 1 })).toMatchObject({
      timeoutMs: 2 ** 31 - 1,
      graceMs: 2 ** 31 - 1,
    });
    for (const name of ["timeoutMs", "gracePeriodMs", "checkIntervalMs"]) {
      const error = caught(() => timeGuard({ [name]: 2 ** 40 }));
      expect(error.code).toBe("ERR_X_GUARD_INVALID_OPTION");
      expect(error.message).toContain(`invalid option ${name}: ${2 ** 40}`);
      expect(error.message).toContain("2147483647");
    }
    for (const name of ["gracePeriodMs", "secondaryGracePeriodMs", "checkIntervalMs"]) {
      expect(caught(() => memGuard({ maxMemoryBytes: 1, [name]: 2 ** 31 })).message).toContain(
        `invalid option ${name}: 2147483648`,
      );
    }
    for (const name of ["timeoutMs", "checkIntervalMs"]) {
      expect(caught(() => runSync(() => 1, { [name]: 2 ** 31 })).message).toContain(`invalid option ${name}`);
    }
  });

  it("rejects the names in Resiliparse's units, and snake_case ones ported from Python", () => {
    for (const [name, meant] of [
      ["timeout", "timeoutMs"],
      ["gracePeriod", "gracePeriodMs"],
      ["checkInterval", "checkIntervalMs"],
      ["timeout_ms", "timeoutMs"],
      ["grace_period", "gracePeriodMs"],
    ]) {
      const error = caught(() => timeGuard({ [name as string]: 5 } as never));
      expect(error.message).toBe(`unknown option ${name}: 5; did you mean ${meant}?`);
    }
  });

  it("counts undefined values as absent, unknown names included", () => {
    expect(timeConfig({ timeoutMs: undefined, interruptType: undefined })).toMatchObject({
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
  it("requires maxMemoryBytes, naming it and its unit", () => {
    const error = caught(() => memGuard({} as never));
    expect(error.code).toBe("ERR_X_GUARD_INVALID_OPTION");
    expect(error.message).toBe(
      "invalid option maxMemoryBytes: undefined (expected a finite number of bytes ≥ 0)",
    );
    expect(caught(() => memGuard(undefined as never)).message).toContain("maxMemoryBytes");
  });

  it("takes bytes", () => {
    expect(memConfig({ maxMemoryBytes: 50 * 1024 ** 2 }).maxBytes).toBe(50 * 1024 ** 2);
    expect(memConfig({ maxMemoryBytes: 0 }).maxBytes).toBe(0);
  });

  it("defaults: absolute, rss, no grace, 5 s secondary grace floored at 10 ms", () => {
    expect(memConfig({ maxMemoryBytes: 1 })).toMatchObject({
      absolute: true,
      metric: "rss",
      graceMs: 0,
      secondaryMs: 5_000,
      checkIntervalMs: 500,
      interruptType: "exception_then_signal",
    });
    expect(memConfig({ maxMemoryBytes: 1, secondaryGracePeriodMs: 0 }).secondaryMs).toBe(10);
    expect(memConfig({ maxMemoryBytes: 1, gracePeriodMs: 3 }).graceMs).toBe(3); // no floor before level 0
    expect(memConfig({ maxMemoryBytes: 1, secondaryGracePeriodMs: 50 }).secondaryMs).toBe(50);
  });

  it.each([
    ["maxMemoryBytes", -1],
    ["maxMemoryBytes", Number.NaN],
    ["metric", "vsz"],
    ["absolute", "no"],
    ["gracePeriodMs", -2],
    ["secondaryGracePeriodMs", Number.POSITIVE_INFINITY],
  ])("rejects %s: %s", (name, value) => {
    const error = caught(() => memGuard({ maxMemoryBytes: 1, [name]: value } as never));
    expect(error.code).toBe("ERR_X_GUARD_INVALID_OPTION");
    expect(error.message).toContain(name);
    expect(error.message).toContain(String(value));
  });

  it("rejects the names in Resiliparse's units", () => {
    for (const name of ["maxMemory", "gracePeriod", "secondaryGracePeriod", "checkInterval"]) {
      const error = caught(() => memGuard({ maxMemoryBytes: 1, [name]: 5 } as never));
      expect(error.message).toMatch(`unknown option ${name}: 5; did you mean ${name}`);
    }
  });

  it("rejects time-only names on a memory guard and memory-only names on a time guard", () => {
    expect(caught(() => memGuard({ maxMemoryBytes: 1, timeoutMs: 1 } as never)).message).toContain(
      "timeoutMs",
    );
    expect(caught(() => timeGuard({ maxMemoryBytes: 1 } as never)).message).toContain("maxMemoryBytes");
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
        { timeoutMs: -1 },
      ),
    );
    expect(error.code).toBe("ERR_X_GUARD_INVALID_OPTION");
    expect(called).toBe(false);
    expect(caught(() => runSync(() => 1, { interruptType: "signal" } as never)).message).toContain(
      "interruptType",
    );
    for (const name of ["timeout", "maxMemory", "checkInterval"]) {
      expect(caught(() => runSync(() => 1, { [name]: 1 } as never)).message).toContain(`option ${name}`);
    }
  });

  it("default to 60 s and 500 ms checks, without a memory limit", () => {
    expect(runSyncConfig({})).toEqual({
      timeoutMs: 60_000,
      checkIntervalMs: 500,
      maxBytes: undefined,
      absolute: true,
    });
    expect(runSyncConfig({ timeoutMs: 2_000, maxMemoryBytes: 3_072, absolute: false })).toEqual({
      timeoutMs: 2_000,
      checkIntervalMs: 500,
      maxBytes: 3_072,
      absolute: false,
    });
  });
});
