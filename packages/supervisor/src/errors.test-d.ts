import { XError } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import type * as api from "./index.js";
import { ErrorCode, SupervisorError } from "./index.js";

describe("ErrorCode", () => {
  it("holds literal ERR_X_SUPERVISOR_… strings", () => {
    expectTypeOf(ErrorCode).toEqualTypeOf<{
      readonly BAD_ARGUMENT: "ERR_X_SUPERVISOR_BAD_ARGUMENT";
      readonly INVALID_OPTION: "ERR_X_SUPERVISOR_INVALID_OPTION";
      readonly BAD_ENTRY: "ERR_X_SUPERVISOR_BAD_ENTRY";
      readonly UNKNOWN_RUN: "ERR_X_SUPERVISOR_UNKNOWN_RUN";
      readonly SCHEMA: "ERR_X_SUPERVISOR_SCHEMA";
      readonly SOCKET_IN_USE: "ERR_X_SUPERVISOR_SOCKET_IN_USE";
      readonly DATABASE: "ERR_X_SUPERVISOR_DATABASE";
      readonly DATABASE_IN_USE: "ERR_X_SUPERVISOR_DATABASE_IN_USE";
      readonly SOCKET_PATH: "ERR_X_SUPERVISOR_SOCKET_PATH";
      readonly TLS: "ERR_X_SUPERVISOR_TLS";
      readonly CONNECT: "ERR_X_SUPERVISOR_CONNECT";
      readonly CONNECTION_CLOSED: "ERR_X_SUPERVISOR_CONNECTION_CLOSED";
      readonly BAD_REPLY: "ERR_X_SUPERVISOR_BAD_REPLY";
    }>();
  });

  it("is also the union type of those codes", () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<(typeof ErrorCode)[keyof typeof ErrorCode]>();
    expectTypeOf<ErrorCode>().toExtend<`ERR_X_SUPERVISOR_${string}`>();
    expectTypeOf<"ERR_X_SUPERVISOR_CONNECT">().toExtend<ErrorCode>();
    // @ts-expect-error: the pre-release `ERR_X_SUPERVISOR_BAD_OPTION` is gone
    const old: ErrorCode = "ERR_X_SUPERVISOR_BAD_OPTION";
    void old;
  });

  it("replaces the removed export", () => {
    expectTypeOf<typeof api>().not.toHaveProperty("SupervisorErrorCode");
  });
});

describe("SupervisorError", () => {
  it("is an XError with the (code, message, options) constructor", () => {
    expectTypeOf<SupervisorError>().toExtend<XError>();
    expectTypeOf(SupervisorError).toBeConstructibleWith(ErrorCode.CONNECT, "no one listens");
    expectTypeOf(SupervisorError).toBeConstructibleWith(ErrorCode.CONNECT, "no one listens", { cause: 1 });
    expectTypeOf<SupervisorError["name"]>().toEqualTypeOf<string>();
    expectTypeOf<SupervisorError["code"]>().toEqualTypeOf<string>();
  });

  it("narrows through XError.is", () => {
    const caught: unknown = undefined;
    if (XError.is(caught, ErrorCode.SCHEMA)) expectTypeOf(caught.code).toEqualTypeOf<string>();
  });
});
