import { XError } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import type * as api from "./index.js";
import { CheckpointError, ErrorCode } from "./index.js";

describe("ErrorCode", () => {
  it("holds literal ERR_X_CHECKPOINT_… strings", () => {
    expectTypeOf(ErrorCode).toEqualTypeOf<{
      readonly INVALID_OPTION: "ERR_X_CHECKPOINT_INVALID_OPTION";
      readonly DUPLICATE_DEPENDENCY: "ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY";
      readonly UNKNOWN_DEPENDENCY: "ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY";
      readonly DEPENDENCY_REQUIRED: "ERR_X_CHECKPOINT_DEPENDENCY_REQUIRED";
      readonly MARKER_TYPE: "ERR_X_CHECKPOINT_MARKER_TYPE";
      readonly STATE_TYPE: "ERR_X_CHECKPOINT_STATE_TYPE";
      readonly ASYNC_CACHE: "ERR_X_CHECKPOINT_ASYNC_CACHE";
      readonly CORRUPT: "ERR_X_CHECKPOINT_CORRUPT";
      readonly CACHE_VALUE: "ERR_X_CHECKPOINT_CACHE_VALUE";
      readonly CACHE_CLOSED: "ERR_X_CHECKPOINT_CACHE_CLOSED";
      readonly CACHE_OPEN: "ERR_X_CHECKPOINT_CACHE_OPEN";
      readonly CACHE_IO: "ERR_X_CHECKPOINT_CACHE_IO";
      readonly SQLITE_UNAVAILABLE: "ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE";
      readonly NOT_A_STREAM: "ERR_X_CHECKPOINT_NOT_A_STREAM";
      readonly ACCESS_REFUSED: "ERR_X_CHECKPOINT_ACCESS_REFUSED";
      readonly UNREACHABLE: "ERR_X_CHECKPOINT_UNREACHABLE";
      readonly SQLITE_VERSION: "ERR_X_CHECKPOINT_SQLITE_VERSION";
    }>();
  });

  it("is also the union type of those codes", () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<
      | "ERR_X_CHECKPOINT_INVALID_OPTION"
      | "ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY"
      | "ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY"
      | "ERR_X_CHECKPOINT_DEPENDENCY_REQUIRED"
      | "ERR_X_CHECKPOINT_MARKER_TYPE"
      | "ERR_X_CHECKPOINT_STATE_TYPE"
      | "ERR_X_CHECKPOINT_ASYNC_CACHE"
      | "ERR_X_CHECKPOINT_CORRUPT"
      | "ERR_X_CHECKPOINT_CACHE_VALUE"
      | "ERR_X_CHECKPOINT_CACHE_CLOSED"
      | "ERR_X_CHECKPOINT_CACHE_OPEN"
      | "ERR_X_CHECKPOINT_CACHE_IO"
      | "ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE"
      | "ERR_X_CHECKPOINT_NOT_A_STREAM"
      | "ERR_X_CHECKPOINT_ACCESS_REFUSED"
      | "ERR_X_CHECKPOINT_UNREACHABLE"
      | "ERR_X_CHECKPOINT_SQLITE_VERSION"
    >();
    expectTypeOf<ErrorCode>().toExtend<`ERR_X_CHECKPOINT_${string}`>();
    expectTypeOf(ErrorCode.MARKER_TYPE).toExtend<ErrorCode>();
    // @ts-expect-error: only the listed codes belong to the union
    const other: ErrorCode = "ERR_X_CHECKPOINT_TIMEOUT";
    void other;
  });

  it("replaces the removed CheckpointErrorCode type", () => {
    // @ts-expect-error: CheckpointErrorCode is gone; ErrorCode is both the object and the union
    expectTypeOf<api.CheckpointErrorCode>().toBeString();
    expectTypeOf<typeof api>().toHaveProperty("ErrorCode");
  });
});

describe("CheckpointError", () => {
  it("is an XError with a string code", () => {
    expectTypeOf<CheckpointError>().toExtend<XError>();
    expectTypeOf<CheckpointError>().toHaveProperty("code").toEqualTypeOf<string>();
    expectTypeOf<CheckpointError["name"]>().toEqualTypeOf<string>();
    expectTypeOf(CheckpointError).toBeConstructibleWith(ErrorCode.CORRUPT, "message");
  });

  it("narrows through XError.is with a code", () => {
    const error: unknown = new Error("x");
    if (XError.is(error, ErrorCode.MARKER_TYPE)) expectTypeOf(error).toExtend<XError>();
  });
});
