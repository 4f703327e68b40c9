import { gzipSync } from "node:zlib";
import { XError } from "@x/core";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it } from "vitest";
import { ErmrestCatalog, type ErmrestCatalogOptions } from "../src/index.js";
import { isOutageError } from "../src/outage.js";
import { startRawServer } from "./raw-server.js";
import { startStubServer } from "./stub-server.js";

function catalogOf(server: string, options: Partial<ErmrestCatalogOptions> = {}): ErmrestCatalog {
  return new ErmrestCatalog({ scheme: "http", server, catalogId: 1, ...options });
}

/** Far below the 63 s attempt timeout, and what a loaded machine still meets. */
const promptlyMs = 20_000;

describe("bodyIdleTimeoutMs", () => {
  it("defaults to 30 s, and rejects what is not a number of milliseconds > 0 and within the longest timer", () => {
    expect(catalogOf("h").toJSON()).toMatchObject({ bodyIdleTimeoutMs: 30_000 });
    expect(catalogOf("h", { bodyIdleTimeoutMs: 250.5 }).toJSON()).toMatchObject({ bodyIdleTimeoutMs: 250.5 });
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, "30s", null]) {
      const error = (() => {
        try {
          catalogOf("h", { bodyIdleTimeoutMs: bad as number });
        } catch (e) {
          return e;
        }
      })();
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
      expect((error as Error).message).toContain("invalid option bodyIdleTimeoutMs: ");
      expect((error as Error).message).toContain("a number of milliseconds > 0 and ≤ 2147483647");
    }
  });

  // A body ended by closing the connection, which its Content-Encoding refutes: undici 7 and later reject at
  // once; undici 6 (Node 22) receives it whole and never ends its stream, even when the request is aborted.
  it.each([
    ["gzip", Buffer.from('[{"a":1}]')],
    ["deflate", Buffer.from('[{"a":1}]')],
    ["deflate", gzipSync("[1]")],
    ["br", Buffer.from('[{"a":1}]')],
    ["br", gzipSync("[1]")],
  ])(
    "a %s body that is not (%#), ended by the connection, rejects with BAD_RESPONSE, once, promptly",
    async (encoding, body) => {
      await using raw = await startRawServer(() =>
        Buffer.concat([
          Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: ${encoding}\r\nConnection: close\r\n\r\n`),
          body,
        ]),
      );
      const started = performance.now();
      const error = await catalogOf(raw.server, { bodyIdleTimeoutMs: 1_000 })
        .get("/entity/S:T")
        .catch((e: unknown) => e);
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_BAD_RESPONSE")).toBe(true);
      expect((error as Error).message).toMatch(
        /^the answer to GET http:\/\/127\.0\.0\.1:\d+\/ermrest\/catalog\/1\/entity\/S:T is not valid HTTP: /,
      );
      expect(raw.requests).toHaveLength(1); // not retried: the same server would answer the same
      expect(performance.now() - started).toBeLessThan(promptlyMs);
    },
  );

  it.each([
    ["a body", "identity", Buffer.from('[{"id":1}')],
    ["a gzip body", "gzip", gzipSync("[1]").subarray(0, 10)],
  ])(
    "ends %s whose server stalls, closes the connection, and retries it as a timed-out network error",
    async (_case, encoding, part) => {
      let requests = 0;
      let closed = 0;
      await using stub = await startStubServer((request, response) => {
        requests++;
        request.socket.on("close", () => closed++);
        response.writeHead(200, {
          "Content-Type": "application/json",
          "Content-Length": 100,
          "Content-Encoding": encoding,
        });
        response.write(part);
      });
      const started = performance.now();
      const error = await catalogOf(stub.server, { bodyIdleTimeoutMs: 500 })
        .get("/entity/S:T")
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "ERR_X_POLLING_CATALOG_NETWORK", cause: { name: "TimeoutError" } });
      expect((error as Error).message).toMatch(
        / \(HTTP 200\) sent nothing for bodyIdleTimeoutMs \(500 ms\); /,
      );
      expect(isOutageError(error)).toBe(true);
      expect(requests).toBe(5); // every try, as after any network error
      expect(performance.now() - started).toBeLessThan(promptlyMs);
      await waitFor(() => closed === 5, 10_000, "every stalled connection closed by the client");
    },
  );

  it("waits as long as each piece of the body comes within it, however long the whole body takes", async () => {
    const pieces = 60;
    await using stub = await startStubServer((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json" });
      let sent = 0;
      response.write("[");
      const timer = setInterval(() => {
        sent++;
        response.write(sent === pieces ? `${sent}]` : `${sent},`);
        if (sent === pieces) {
          clearInterval(timer);
          response.end();
        }
      }, 50);
      response.on("close", () => clearInterval(timer));
    });
    const started = performance.now();
    const response = await catalogOf(stub.server, { bodyIdleTimeoutMs: 2_000 }).get("/entity/S:T");
    expect(response.json()).toHaveLength(pieces);
    expect(performance.now() - started).toBeGreaterThan(2_000); // longer than the idle timeout in all
  });
});
