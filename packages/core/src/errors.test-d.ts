import { describe, expectTypeOf, it } from "vitest";
import type * as api from "./index.js";
import { XError, type XErrorOptions } from "./index.js";
import { optionError, UsageError, type XErrorClass } from "./internal.js";

describe("XError", () => {
  it("is an Error with a code, an explicit name and a cause", () => {
    expectTypeOf<XError>().toExtend<Error>();
    expectTypeOf<XError["code"]>().toEqualTypeOf<string>();
    expectTypeOf<XError["name"]>().toEqualTypeOf<string>();
    expectTypeOf<XError["cause"]>().toEqualTypeOf<unknown>();
    expectTypeOf<XErrorOptions>().toEqualTypeOf<{ cause?: unknown }>();
    expectTypeOf(XError).toBeConstructibleWith("ERR_X_DEMO", "message");
    expectTypeOf(XError).toBeConstructibleWith("ERR_X_DEMO", "message", { cause: new Error() });
    // @ts-expect-error: the code comes first and is required
    new XError("message");
    const error = new XError("ERR_X_DEMO", "message");
    // @ts-expect-error: the code is read-only
    error.code = "ERR_X_OTHER";
  });

  it("XError.is() is a type guard, with or without a code", () => {
    expectTypeOf(XError.is).toEqualTypeOf<(value: unknown, code?: string) => value is XError>();
    const caught: unknown = undefined;
    if (XError.is(caught)) expectTypeOf(caught.code).toEqualTypeOf<string>();
  });

  it("toJSON() gives the structured-log shape", () => {
    expectTypeOf<ReturnType<XError["toJSON"]>>().toEqualTypeOf<{
      name: string;
      code: string;
      message: string;
      cause?: string;
    }>();
  });
});

describe("subclasses", () => {
  it("UsageError is an XError built from a message alone", () => {
    expectTypeOf<UsageError>().toExtend<XError>();
    expectTypeOf(UsageError).toBeConstructibleWith("unknown flag --x");
    expectTypeOf(UsageError).toBeConstructibleWith("unknown flag --x", { cause: 1 });
    // @ts-expect-error: UsageError's code is fixed (ERR_X_USAGE)
    new UsageError("ERR_X_USAGE", "unknown flag --x", {});
  });

  it("XErrorClass is what a package passes as its error class", () => {
    expectTypeOf<typeof XError>().toExtend<XErrorClass>();
    class DemoError extends XError {
      override name = "DemoError";
    }
    expectTypeOf<typeof DemoError>().toExtend<XErrorClass>();
    // UsageError's constructor does not take a code, so it is no XErrorClass.
    expectTypeOf<typeof UsageError>().not.toExtend<XErrorClass>();
    expectTypeOf(optionError).toBeCallableWith("ERR_X_DEMO", "retries", -1, "an integer ≥ 0", DemoError);
    expectTypeOf(optionError("ERR_X_DEMO", "retries", -1, "an integer ≥ 0")).toEqualTypeOf<XError>();
  });

  it("core has no ErrorCode object of its own", () => {
    expectTypeOf<typeof api>().not.toHaveProperty("ErrorCode");
  });
});
