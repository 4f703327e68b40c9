import { brotliCompressSync } from "node:zlib";
import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { ErmrestCatalog, PollingErmrestCatalog } from "../src/index.js";
import { startRawServer } from "./raw-server.js";
import { startStubServer } from "./stub-server.js";

/**
 * Node 22's fetch (undici 6) neither decodes zstd bodies nor tells a 101 from a dropped connection; Node 24's
 * (undici 7) and later do both.
 */
const undiciMajor = Number(process.versions.undici?.split(".")[0] ?? 0);

const ok = (head: string, body: Buffer | string = "[]") =>
  Buffer.concat([Buffer.from(`HTTP/1.1 ${head}\r\nConnection: close\r\n\r\n`, "latin1"), Buffer.from(body)]);

/** Regressions the fuzzers of `catalog.fuzz.test.ts` found, one answer each. */
describe("answers that break HTTP reject with ERR_X_POLLING_CATALOG_BAD_RESPONSE, once, not as a TypeError", () => {
  it.each([
    ["a control byte in a header value", ok('200 OK\r\nETag: "a\x01b"\r\nContent-Length: 2')],
    ["a header name that is not a token", ok("200 OK\r\nE\x00Tag: x\r\nContent-Length: 2")],
    ["a status line that is not HTTP", Buffer.from("garbage\r\n\r\n")],
    ["headers over 16 KiB", ok(`200 OK\r\nETag: "${"e".repeat(70_000)}"\r\nContent-Length: 2`)],
    ["two different Content-Lengths", ok("200 OK\r\nContent-Length: 2\r\nContent-Length: 3")],
    ["a gzip body that is not gzip", ok("200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4", "abcd")],
    ["a br body that is not brotli", ok("200 OK\r\nContent-Encoding: br\r\nContent-Length: 8", '[{"":0}]')],
    ["407, which fetch refuses", ok("407 Proxy Authentication Required\r\nContent-Length: 2")],
    ["a Location that is not a URL", ok("302 Found\r\nLocation: http://[bad\r\nContent-Length: 0")],
    ["a Location that is not http(s)", ok("301 Moved\r\nLocation: javascript:x\r\nContent-Length: 0")],
    [
      "two Location headers, one of them empty (undici fails on it with a TypeError of its own)",
      ok("301 Moved\r\nLocation: /ermrest/catalog/1/elsewhere\r\nLocation: \r\nContent-Length: 0"),
    ],
    [
      "a redirect whose body is mis-chunked",
      ok("301 Moved\r\nLocation: /ermrest/catalog/1/x\r\nTransfer-Encoding: chunked", "zz\r\nnull"),
    ],
  ])("%s", async (_case, answer) => {
    await using raw = await startRawServer(() => answer);
    const catalog = new ErmrestCatalog({ scheme: "http", server: raw.server, catalogId: 1 });
    const error = await catalog.get("/entity/S:T").catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_BAD_RESPONSE")).toBe(true);
    expect((error as Error).message).toMatch(
      /^the answer to GET http:\/\/127\.0\.0\.1:\d+\/ermrest\/catalog\/1\/entity\/S:T /,
    );
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect(raw.requests).toHaveLength(1); // not retried: the same server would answer the same
  });

  it.runIf(undiciMajor >= 7).each([
    ["a zstd body that is not zstd", ok("200 OK\r\nContent-Encoding: zstd\r\nContent-Length: 4", "[\0]\0")],
    ["101 without an upgrade", ok("101 Switching Protocols")],
  ])("%s (undici 7 and later)", async (_case, answer) => {
    await using raw = await startRawServer(() => answer);
    const catalog = new ErmrestCatalog({ scheme: "http", server: raw.server, catalogId: 1 });
    const error = await catalog.get("/entity/S:T").catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_BAD_RESPONSE")).toBe(true);
    expect(raw.requests).toHaveLength(1);
  });

  it.runIf(undiciMajor < 7)(
    "with undici 6 (Node 22), a zstd body is left undecoded and a 101 is a dropped connection",
    async () => {
      await using zstd = await startRawServer(() =>
        ok("200 OK\r\nContent-Encoding: zstd\r\nContent-Length: 4", "[\0]\0"),
      );
      const plain = new ErmrestCatalog({ scheme: "http", server: zstd.server, catalogId: 1 });
      expect((await plain.get("/entity/S:T")).text()).toBe("[\0]\0");
      await using upgrade = await startRawServer(() => ok("101 Switching Protocols"));
      const catalog = new ErmrestCatalog({ scheme: "http", server: upgrade.server, catalogId: 1 });
      const error = await catalog.get("/entity/S:T").catch((e: unknown) => e);
      // fetch failed: other side closed, retried as any network error
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_NETWORK")).toBe(true);
      expect(upgrade.requests.length).toBeGreaterThan(1);
    },
  );

  it("a redirect loop", async () => {
    await using raw = await startRawServer(() => ok("302 Found\r\nLocation: /again\r\nContent-Length: 0"));
    const catalog = new ErmrestCatalog({ scheme: "http", server: raw.server, catalogId: 1 });
    const error = await catalog.get("/entity/S:T").catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_BAD_RESPONSE")).toBe(true);
    expect((error as Error).message).toContain("redirect count exceeded");
  });

  it("a real brotli body is still read", async () => {
    const body = brotliCompressSync("[1]");
    await using raw = await startRawServer(() =>
      ok(`200 OK\r\nContent-Encoding: br\r\nContent-Length: ${body.length}`, body),
    );
    const catalog = new ErmrestCatalog({ scheme: "http", server: raw.server, catalogId: 1 });
    expect((await catalog.get("/entity/S:T")).json()).toEqual([1]);
  });
});

describe("a 421 Misdirected Request", () => {
  it.each([
    ["truncated", "Content-Length: 20", "{}"],
    ["mis-chunked", "Transfer-Encoding: chunked", "zz\r\n{}"],
  ])(
    "with a %s body rejects with HTTPError 421 at once, its body unread (undici never ends it)",
    async (_case, framing, body) => {
      await using raw = await startRawServer(() => ok(`421 Misdirected\r\n${framing}`, body));
      const catalog = new ErmrestCatalog({ scheme: "http", server: raw.server, catalogId: 1 });
      const started = performance.now();
      const error = await catalog.get("/entity/S:T").catch((e: unknown) => e);
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_HTTP")).toBe(true);
      expect(error).toMatchObject({ status: 421, body: "" });
      expect(performance.now() - started).toBeLessThan(10_000); // before: the 63 s attempt timeout, 5 times
    },
  );
});

describe("stateChangeOnce only hands JSON objects to the transform", () => {
  it.each([["[[1]]"], ["[null]"], ['[{"id":1},2]'], ['["row"]']])(
    "rejects %s with ERR_X_POLLING_CATALOG_BAD_RESPONSE before calling it",
    async (body) => {
      await using stub = await startStubServer((_request, response) => {
        response.writeHead(200, { "Content-Type": "application/json", ETag: '"v1"' });
        response.end(body);
      });
      const catalog = new PollingErmrestCatalog({ scheme: "http", server: stub.server, catalogId: 1 });
      const rows: unknown[] = [];
      const error = await catalog
        .stateChangeOnce("/entity/S:T", "/attributegroup/S:T/id;state", (row) => {
          rows.push(row);
          return row;
        })
        .catch((e: unknown) => e);
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_BAD_RESPONSE")).toBe(true);
      expect((error as Error).message).toContain("is not a JSON array of objects");
      expect(rows).toEqual([]);
    },
  );
});

describe("ETags", () => {
  it("drop the spaces and tabs around them, so that If-None-Match sends back exactly etag", async () => {
    await using raw = await startRawServer(() => ok('200 OK\r\nETag:  "v1"\t\r\nContent-Length: 2'));
    const catalog = new ErmrestCatalog({ scheme: "http", server: raw.server, catalogId: 1 });
    const response = await catalog.get("/entity/S:T");
    expect(response.etag).toBe('"v1"');
    await catalog.get("/entity/S:T");
    expect(raw.requests[1]?.header("if-none-match")?.toString("latin1")).toBe(response.etag);
  });
});
