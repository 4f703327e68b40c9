import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { recordingLogger } from "../../../test-support/recording-logger.js";
import { exitCodeFor, reportFailure, retryWhileUnavailable, systemFailureKind } from "./failure-kind.js";

const systemError = (code: string) => Object.assign(new Error(code), { code });

describe("exitCodeFor", () => {
  it("gives 78 to what is in use, unusable or refused, 69 to what does not answer", () => {
    expect((["in-use", "unusable", "refused", "unavailable", "failure"] as const).map(exitCodeFor)).toEqual([
      78, 78, 78, 69, 1,
    ]);
  });
});

describe("systemFailureKind", () => {
  it("reads the code of the error or of a cause", () => {
    expect(systemFailureKind(systemError("EADDRINUSE"))).toBe("in-use");
    expect(systemFailureKind(new Error("wrapped", { cause: systemError("ECONNREFUSED") }))).toBe(
      "unavailable",
    );
    expect(systemFailureKind(systemError("EACCES"))).toBe("unusable");
    expect(systemFailureKind(new Error("plain"))).toBeUndefined();
    expect(systemFailureKind("not an error")).toBeUndefined();
  });

  it("knows a port in use when it meets one", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as { port: number };
    const second = createServer();
    const error = await new Promise((resolve) => {
      second.once("error", resolve);
      second.listen(port, "127.0.0.1");
    });
    taken.close();
    expect(systemFailureKind(error)).toBe("in-use");
  });

  it("stops on a cause chain that loops", () => {
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(systemFailureKind(a)).toBeUndefined();
  });
});

describe("reportFailure", () => {
  it("logs one line with the code and the kind, and returns the kind's status", () => {
    const { logger, records } = recordingLogger();
    const status = reportFailure(logger, "cannot start", systemError("EADDRINUSE"), "in-use");
    expect(status).toBe(78);
    expect(records).toEqual([
      { level: "error", fields: { code: "EADDRINUSE", kind: "in-use" }, msg: "cannot start: EADDRINUSE" },
    ]);
  });
});

describe("retryWhileUnavailable", () => {
  it("tries again while nothing answers, then gives up with the last error", async () => {
    let attempts = 0;
    const started = Date.now();
    const failing = retryWhileUnavailable(
      async () => {
        attempts++;
        throw systemError("ECONNREFUSED");
      },
      { graceMs: 200, delayMs: 20 },
    );
    await expect(failing).rejects.toMatchObject({ code: "ECONNREFUSED" });
    expect(attempts).toBeGreaterThan(3);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("returns once the dependency answers, and throws any other error at once", async () => {
    let attempts = 0;
    const retried: number[] = [];
    const value = await retryWhileUnavailable(
      async () => {
        if (++attempts < 3) throw systemError("ECONNREFUSED");
        return "open";
      },
      { delayMs: 1, onRetry: (_, n) => retried.push(n) },
    );
    expect([value, retried]).toEqual(["open", [1, 2]]);
    let refusals = 0;
    const refused = retryWhileUnavailable(async () => {
      refusals++;
      throw Object.assign(new Error("password authentication failed"), { code: "28P01" });
    });
    await expect(refused).rejects.toMatchObject({ code: "28P01" });
    expect(refusals).toBe(1);
  });
});
