import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import * as api from "./index.js";

describe("errors", () => {
  it("every exported error class has its own name", () => {
    const classes = Object.entries(api).filter(
      ([, value]) => typeof value === "function" && value.prototype instanceof Error,
    ) as Array<[string, new (code: string, message: string) => Error]>;
    expect(classes.map(([name]) => name)).toEqual(["CheckpointError"]);
    for (const [name, ErrorClass] of classes) {
      const error = new ErrorClass(api.ErrorCode.INVALID_OPTION, "x");
      expect(error.name).toBe(name);
      expect(String(error)).toBe(`${name}: x`);
      expect(XError.is(error, "ERR_X_CHECKPOINT_INVALID_OPTION")).toBe(true);
    }
  });

  it("every code is ERR_X_CHECKPOINT_ plus its key", () => {
    for (const [key, code] of Object.entries(api.ErrorCode)) expect(code).toBe(`ERR_X_CHECKPOINT_${key}`);
  });

  it("an error the package throws is a CheckpointError named so", () => {
    let caught: unknown;
    try {
      new api.Dependency("");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(api.CheckpointError);
    expect((caught as Error).name).toBe("CheckpointError");
    expect(XError.is(caught, api.ErrorCode.INVALID_OPTION)).toBe(true);
  });
});
