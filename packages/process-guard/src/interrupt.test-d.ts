import { describe, expectTypeOf, it } from "vitest";
import { type ExecutionTimeout, interruptOf, isInterrupt, type MemoryLimitExceeded } from "./index.js";

describe("isInterrupt and interruptOf", () => {
  it("take anything caught", () => {
    expectTypeOf(isInterrupt).parameter(0).toEqualTypeOf<unknown>();
    expectTypeOf(isInterrupt).returns.toEqualTypeOf<boolean>();
    expectTypeOf(interruptOf).parameter(0).toEqualTypeOf<unknown>();
  });

  it("interruptOf gives the guard's error, with its fields, or undefined", () => {
    expectTypeOf(interruptOf).returns.toEqualTypeOf<ExecutionTimeout | MemoryLimitExceeded | undefined>();
    const found = interruptOf(new Error("x"));
    if (found) expectTypeOf(found.level).toEqualTypeOf<0 | 1 | 2>();
  });
});
