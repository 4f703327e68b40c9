import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { ErrorCode, ExecutionTimeout, GuardError, MemoryLimitExceeded } from "./errors.js";
import * as api from "./index.js";

describe("errors", () => {
  it("are XErrors with stable codes, their class as name, and instanceof along the chain", () => {
    const timeout = new ExecutionTimeout({ level: 1, limitMs: 1_000, elapsedMs: 1_250 });
    expect(timeout.name).toBe("ExecutionTimeout");
    expect(timeout.code).toBe("ERR_X_GUARD_TIMEOUT");
    expect(timeout).toBeInstanceOf(GuardError);
    expect(timeout).toBeInstanceOf(XError);
    expect(XError.is(timeout, "ERR_X_GUARD_TIMEOUT")).toBe(true);
    expect(timeout).toMatchObject({ level: 1, limitMs: 1_000, elapsedMs: 1_250 });
    expect(timeout.message).toContain("level 1");

    const memory = new MemoryLimitExceeded({
      level: 0,
      limitBytes: 1024,
      observedBytes: 4096,
      metric: "tree",
    });
    expect(memory.name).toBe("MemoryLimitExceeded");
    expect(memory.code).toBe("ERR_X_GUARD_MEMORY");
    expect(memory).toBeInstanceOf(GuardError);
    expect(memory).toMatchObject({ level: 0, limitBytes: 1024, observedBytes: 4096, metric: "tree" });
    expect(memory.message).toContain("tree 4.0 KiB > limit 1.0 KiB");

    const base = new GuardError(ErrorCode.NO_CONTEXT, "outside");
    expect(base.name).toBe("GuardError");
    expect(XError.is(base, "ERR_X_GUARD_NO_CONTEXT")).toBe(true);
  });

  it("every exported error class sets its own name, also in toJSON()", () => {
    const instances: Record<string, XError> = {
      GuardError: new GuardError(ErrorCode.INVALID_OPTION, "bad"),
      ExecutionTimeout: new ExecutionTimeout({ level: 0, limitMs: 1, elapsedMs: 2 }),
      MemoryLimitExceeded: new MemoryLimitExceeded({
        level: 0,
        limitBytes: 1,
        observedBytes: 2,
        metric: "rss",
      }),
    };
    const exported = Object.entries(api)
      .filter(([, value]) => typeof value === "function" && value.prototype instanceof Error)
      .map(([name]) => name)
      .sort();
    expect(Object.keys(instances).sort()).toEqual(exported);
    for (const [name, error] of Object.entries(instances)) {
      expect(error.name).toBe(name);
      expect(error.toJSON().name).toBe(name);
    }
  });

  it("export one ErrorCode object whose bad-option code is ERR_X_GUARD_INVALID_OPTION", () => {
    expect(api.ErrorCode).toEqual({
      NO_CONTEXT: "ERR_X_GUARD_NO_CONTEXT",
      UNSUPPORTED: "ERR_X_GUARD_UNSUPPORTED",
      INVALID_OPTION: "ERR_X_GUARD_INVALID_OPTION",
      TIMEOUT: "ERR_X_GUARD_TIMEOUT",
      MEMORY: "ERR_X_GUARD_MEMORY",
    });
  });

  it("keep a cause", () => {
    const cause = new Error("interrupted");
    expect(new ExecutionTimeout({ level: 0, limitMs: 1, elapsedMs: 2 }, { cause }).cause).toBe(cause);
  });
});
