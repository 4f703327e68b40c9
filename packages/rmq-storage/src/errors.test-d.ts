import { XError } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import { ErrorCode, RmqStorageError } from "./index.js";

describe("ErrorCode", () => {
  it("holds literal ERR_X_RMQ_STORAGE_… strings", () => {
    expectTypeOf(ErrorCode).toEqualTypeOf<{
      readonly BAD_INPUT: "ERR_X_RMQ_STORAGE_BAD_INPUT";
      readonly INVALID_OPTION: "ERR_X_RMQ_STORAGE_INVALID_OPTION";
      readonly CLOSED: "ERR_X_RMQ_STORAGE_CLOSED";
      readonly CONNECT: "ERR_X_RMQ_STORAGE_CONNECT";
      readonly ACCESS_REFUSED: "ERR_X_RMQ_STORAGE_ACCESS_REFUSED";
      readonly UNREACHABLE: "ERR_X_RMQ_STORAGE_UNREACHABLE";
      readonly TOPOLOGY: "ERR_X_RMQ_STORAGE_TOPOLOGY";
      readonly IN_USE: "ERR_X_RMQ_STORAGE_IN_USE";
      readonly NO_SERVER: "ERR_X_RMQ_STORAGE_NO_SERVER";
      readonly UNROUTABLE: "ERR_X_RMQ_STORAGE_UNROUTABLE";
      readonly NACKED: "ERR_X_RMQ_STORAGE_NACKED";
      readonly REJECTED: "ERR_X_RMQ_STORAGE_REJECTED";
      readonly TIMED_OUT: "ERR_X_RMQ_STORAGE_TIMED_OUT";
      readonly BACKEND: "ERR_X_RMQ_STORAGE_BACKEND";
      readonly DRIVER_UNAVAILABLE: "ERR_X_RMQ_STORAGE_DRIVER_UNAVAILABLE";
      readonly DRIVER_VERSION: "ERR_X_RMQ_STORAGE_DRIVER_VERSION";
    }>();
  });

  it("is also the union type of those codes", () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<
      | "ERR_X_RMQ_STORAGE_BAD_INPUT"
      | "ERR_X_RMQ_STORAGE_INVALID_OPTION"
      | "ERR_X_RMQ_STORAGE_CLOSED"
      | "ERR_X_RMQ_STORAGE_CONNECT"
      | "ERR_X_RMQ_STORAGE_ACCESS_REFUSED"
      | "ERR_X_RMQ_STORAGE_UNREACHABLE"
      | "ERR_X_RMQ_STORAGE_TOPOLOGY"
      | "ERR_X_RMQ_STORAGE_IN_USE"
      | "ERR_X_RMQ_STORAGE_NO_SERVER"
      | "ERR_X_RMQ_STORAGE_UNROUTABLE"
      | "ERR_X_RMQ_STORAGE_NACKED"
      | "ERR_X_RMQ_STORAGE_REJECTED"
      | "ERR_X_RMQ_STORAGE_TIMED_OUT"
      | "ERR_X_RMQ_STORAGE_BACKEND"
      | "ERR_X_RMQ_STORAGE_DRIVER_UNAVAILABLE"
      | "ERR_X_RMQ_STORAGE_DRIVER_VERSION"
    >();
    // @ts-expect-error: the pre-release `ERR_X_RMQ_STORAGE_BAD_OPTION` is gone
    const old: ErrorCode = "ERR_X_RMQ_STORAGE_BAD_OPTION";
    void old;
  });
});

describe("RmqStorageError", () => {
  it("is an XError with the (code, message, options) constructor", () => {
    expectTypeOf<RmqStorageError>().toExtend<XError>();
    expectTypeOf(RmqStorageError).toBeConstructibleWith(ErrorCode.BACKEND, "read failed", {
      cause: new Error(),
    });
    expectTypeOf<RmqStorageError["code"]>().toEqualTypeOf<string>();
    expectTypeOf<RmqStorageError["cause"]>().toEqualTypeOf<unknown>();
  });

  it("narrows through XError.is", () => {
    const caught: unknown = undefined;
    if (XError.is(caught, ErrorCode.CLOSED)) expectTypeOf(caught).toEqualTypeOf<XError>();
  });
});
