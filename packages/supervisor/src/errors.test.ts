import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { ErrorCode, SupervisorError } from "./errors.js";
import * as api from "./index.js";

describe("errors", () => {
  it("every exported error class sets its own name, also in toJSON()", () => {
    const instances: Record<string, XError> = {
      SupervisorError: new SupervisorError(ErrorCode.INVALID_OPTION, "bad"),
    };
    const exported = Object.entries(api)
      .filter(([, value]) => typeof value === "function" && value.prototype instanceof Error)
      .map(([name]) => name)
      .sort();
    expect(Object.keys(instances).sort()).toEqual(exported);
    for (const [name, error] of Object.entries(instances)) {
      expect(error.name).toBe(name);
      expect(error.toJSON().name).toBe(name);
      expect(error).toBeInstanceOf(XError);
      expect(XError.is(error, "ERR_X_SUPERVISOR_INVALID_OPTION")).toBe(true);
    }
  });

  it("export one ErrorCode object whose bad-option code is ERR_X_SUPERVISOR_INVALID_OPTION", () => {
    expect(api.ErrorCode).toEqual({
      BAD_ARGUMENT: "ERR_X_SUPERVISOR_BAD_ARGUMENT",
      INVALID_OPTION: "ERR_X_SUPERVISOR_INVALID_OPTION",
      BAD_ENTRY: "ERR_X_SUPERVISOR_BAD_ENTRY",
      UNKNOWN_RUN: "ERR_X_SUPERVISOR_UNKNOWN_RUN",
      SCHEMA: "ERR_X_SUPERVISOR_SCHEMA",
      SOCKET_IN_USE: "ERR_X_SUPERVISOR_SOCKET_IN_USE",
      DATABASE: "ERR_X_SUPERVISOR_DATABASE",
      DATABASE_IN_USE: "ERR_X_SUPERVISOR_DATABASE_IN_USE",
      SOCKET_PATH: "ERR_X_SUPERVISOR_SOCKET_PATH",
      TLS: "ERR_X_SUPERVISOR_TLS",
      CONNECT: "ERR_X_SUPERVISOR_CONNECT",
      CONNECTION_CLOSED: "ERR_X_SUPERVISOR_CONNECTION_CLOSED",
      BAD_REPLY: "ERR_X_SUPERVISOR_BAD_REPLY",
    });
  });
});
