import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { ExecutionTimeout, GuardError, MemoryLimitExceeded } from "./errors.js";

describe("errors", () => {
  it("are XErrors with stable codes, their class as name, and instanceof along the chain", () => {
    const timeout = new ExecutionTimeout({ level: 1, limit: 1_000, elapsed: 1_250 });
    expect(timeout.name).toBe("ExecutionTimeout");
    expect(timeout.code).toBe("ERR_X_GUARD_TIMEOUT");
    expect(timeout).toBeInstanceOf(GuardError);
    expect(timeout).toBeInstanceOf(XError);
    expect(XError.is(timeout, "ERR_X_GUARD_TIMEOUT")).toBe(true);
    expect(timeout).toMatchObject({ level: 1, limit: 1_000, elapsed: 1_250, elapsedMs: 1_250 });
    expect(timeout.message).toContain("level 1");

    const memory = new MemoryLimitExceeded({ level: 0, limit: 1024, observed: 4096, metric: "tree" });
    expect(memory.name).toBe("MemoryLimitExceeded");
    expect(memory.code).toBe("ERR_X_GUARD_MEMORY");
    expect(memory).toBeInstanceOf(GuardError);
    expect(memory).toMatchObject({ level: 0, limit: 1024, observed: 4096, metric: "tree" });
    expect(memory.message).toContain("tree 4.0 KiB > limit 1.0 KiB");

    const base = new GuardError("ERR_X_GUARD_NO_CONTEXT", "outside");
    expect(base.name).toBe("GuardError");
    expect(XError.is(base, "ERR_X_GUARD_NO_CONTEXT")).toBe(true);
  });

  it("keep a cause", () => {
    const cause = new Error("interrupted");
    expect(new ExecutionTimeout({ level: 0, limit: 1, elapsed: 2 }, { cause }).cause).toBe(cause);
  });
});
