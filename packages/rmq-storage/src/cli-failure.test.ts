import { describe, expect, it } from "vitest";
import { rmqStorageFailureKind } from "./cli-failure.js";
import { ErrorCode, RmqStorageError } from "./errors.js";

const backend = (cause: object) => new RmqStorageError(ErrorCode.BACKEND, "cannot open", { cause });

describe("rmqStorageFailureKind", () => {
  it("tells a refusal, a server that does not answer, a port in use and a bad value apart", () => {
    expect(rmqStorageFailureKind(new RmqStorageError(ErrorCode.ACCESS_REFUSED, "login"))).toBe("refused");
    expect(rmqStorageFailureKind(backend({ code: "28P01" }))).toBe("refused"); // wrong password
    expect(rmqStorageFailureKind(backend({ code: "3D000" }))).toBe("refused"); // no such database
    expect(rmqStorageFailureKind(backend({ code: "ECONNREFUSED" }))).toBe("unavailable");
    expect(rmqStorageFailureKind(new RmqStorageError(ErrorCode.UNREACHABLE, "nobody"))).toBe("unavailable");
    const metrics = new RmqStorageError(ErrorCode.INVALID_OPTION, "metrics", {
      cause: { code: "EADDRINUSE" },
    });
    expect(rmqStorageFailureKind(metrics)).toBe("in-use");
    expect(rmqStorageFailureKind(backend({ code: "42P07" }))).toBe("unusable");
    expect(rmqStorageFailureKind(new RmqStorageError(ErrorCode.IN_USE, "consumers"))).toBe("failure");
  });
});
