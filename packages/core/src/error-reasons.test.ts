import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { errorReasons } from "./error-reasons.js";

async function fetchError(url: string): Promise<unknown> {
  return fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
    () => new Error("expected a failure"),
    (error: unknown) => error,
  );
}

describe("errorReasons", () => {
  it("says a refused connection's reason after fetch failed", async () => {
    const server = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    expect(errorReasons(await fetchError(`http://127.0.0.1:${port}/`))).toBe(
      `fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it("says a TLS handshake with a plain http server failed, briefly", async () => {
    const server = createServer((_request, response) => response.end("ok")).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      expect(errorReasons(await fetchError(`https://127.0.0.1:${port}/`))).toBe(
        "fetch failed: TLS wrong version number (ERR_SSL_WRONG_VERSION_NUMBER; is the server plain http?)",
      );
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("says each reason once, codes for empty messages, the errors of an AggregateError", () => {
    const inner = Object.assign(new Error(""), { code: "ECONNRESET" });
    expect(errorReasons(new Error("a", { cause: new Error("a", { cause: inner }) }))).toBe("a: ECONNRESET");
    const both = new AggregateError(
      [new Error("connect ECONNREFUSED ::1:1"), new Error("connect ECONNREFUSED 127.0.0.1:1")],
      "",
    );
    expect(errorReasons(new TypeError("fetch failed", { cause: both }))).toBe(
      "fetch failed: connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1",
    );
    expect(errorReasons("plain")).toBe("plain");
  });
});
