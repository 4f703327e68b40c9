import { describe, expect, it } from "vitest";
import { XError } from "./x-error.js";

class DemoError extends XError {
  override name = "DemoError";
}

describe("XError", () => {
  it("carries a stable code, a message and a cause", () => {
    const cause = new Error("disk full");
    const error = new XError("ERR_X_DEMO_WRITE", "write failed", { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe("ERR_X_DEMO_WRITE");
    expect(error.message).toBe("write failed");
    expect(error.cause).toBe(cause);
    expect(error.name).toBe("XError");
    expect(String(error.stack)).toContain("write failed");
  });

  it("leaves cause unset when none is given", () => {
    expect("cause" in new XError("ERR_X_DEMO", "m")).toBe(false);
  });

  it("takes a subclass's explicit name, which survives a minifier renaming the class, and keeps instanceof", () => {
    const Renamed = class extends XError {
      override name = "GuardError";
    };
    expect(new Renamed("ERR_X_DEMO", "m").name).toBe("GuardError");
    expect(Renamed.name).not.toBe("GuardError");
    const error = new DemoError("ERR_X_DEMO", "m");
    expect(error.name).toBe("DemoError");
    expect(error).toBeInstanceOf(XError);
    expect(XError.is(error)).toBe(true);
  });

  it("is() tells XErrors from anything else, optionally by code", () => {
    const error = new XError("ERR_X_DEMO_A", "m");
    expect(XError.is(error, "ERR_X_DEMO_A")).toBe(true);
    expect(XError.is(error, "ERR_X_DEMO_B")).toBe(false);
    for (const other of [new Error("m"), { code: "ERR_X_DEMO_A" }, null, undefined, "ERR_X_DEMO_A", 42]) {
      expect(XError.is(other)).toBe(false);
    }
  });

  it("serialises for structured logs", () => {
    const error = new XError("ERR_X_DEMO", "outer", { cause: new Error("inner") });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: "XError",
      code: "ERR_X_DEMO",
      message: "outer",
      cause: "inner",
    });
  });
});
