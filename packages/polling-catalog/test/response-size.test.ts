import { XError } from "@x/core";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it } from "vitest";
import { ErmrestCatalog, type ErmrestCatalogOptions } from "../src/index.js";
import { startStubServer } from "./stub-server.js";

const MiB = 1024 * 1024;

function catalogOf(server: string, options: Partial<ErmrestCatalogOptions> = {}): ErmrestCatalog {
  return new ErmrestCatalog({ scheme: "http", server, catalogId: 1, ...options });
}

describe("maxResponseBytes", () => {
  it("defaults to 64 MiB, and rejects what is not an integer number of bytes ≥ 0", () => {
    expect(catalogOf("h").toJSON()).toMatchObject({ maxResponseBytes: 64 * MiB, maxCacheBytes: 64 * MiB });
    for (const bad of [-1, 1.5, "1M", Number.POSITIVE_INFINITY, Number.NaN]) {
      for (const option of ["maxResponseBytes", "maxCacheBytes"]) {
        const error = (() => {
          try {
            catalogOf("h", { [option]: bad });
          } catch (e) {
            return e;
          }
        })();
        expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
        expect((error as Error).message).toContain(`invalid option ${option}: `);
        expect((error as Error).message).toContain("an integer number of bytes ≥ 0");
      }
    }
  });

  it("stops reading an endless body once it passes the bound, closes the connection, and does not retry", async () => {
    let requests = 0;
    let sent = 0;
    let closed = 0;
    const chunk = Buffer.alloc(64 * 1024, "x");
    await using stub = await startStubServer((request, response) => {
      requests++;
      response.writeHead(200, { "Content-Type": "application/json" }); // chunked: no Content-Length
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) sent += chunk.length;
      };
      response.on("drain", pump);
      request.socket.on("close", () => closed++);
      pump();
    });
    const error = await catalogOf(stub.server, { maxResponseBytes: MiB })
      .get("/entity/S:T")
      .catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE")).toBe(true);
    expect((error as Error).message).toMatch(
      /^the response to GET http:\/\/127\.0\.0\.1:\d+\/ermrest\/catalog\/1\/entity\/S:T \(HTTP 200\) had sent more than 1048576 bytes, over maxResponseBytes \(1048576\)/,
    );
    await waitFor(() => closed === 1, 10_000, "the connection closed by the client");
    expect(requests).toBe(1);
    expect(sent).toBeLessThan(16 * MiB); // what the server could push into socket buffers, not the endless body
  });

  it("refuses a declared Content-Length over the bound before reading the body", async () => {
    let closed = false;
    await using stub = await startStubServer((request, response) => {
      response.writeHead(503, { "Content-Length": String(10 * MiB), "Content-Type": "text/plain" });
      response.write("Transaction aborted."); // and nothing more: a client that waits for the body hangs
      request.socket.on("close", () => {
        closed = true;
      });
    });
    const error = await catalogOf(stub.server, { maxResponseBytes: MiB })
      .post("/entity/S:T", { json: [] })
      .catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE")).toBe(true);
    expect((error as Error).message).toContain(`(HTTP 503) declares ${10 * MiB} bytes`);
    await waitFor(() => closed, 10_000, "the connection closed by the client");
  });

  it("reads a body of exactly maxResponseBytes, and bounds error bodies too", async () => {
    let size = 1000;
    let status = 200;
    await using stub = await startStubServer((_request, response) => {
      response.writeHead(status, { "Content-Type": "text/plain" });
      response.end("é".repeat(size / 2)); // two bytes each
    });
    const catalog = catalogOf(stub.server, { maxResponseBytes: 1000 });
    expect((await catalog.get("/a")).text()).toBe("é".repeat(500));
    size = 1002;
    const tooLarge = await catalog.get("/b").catch((e: unknown) => e);
    expect(XError.is(tooLarge, "ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE")).toBe(true);
    status = 404;
    const notFound = await catalog.get("/c").catch((e: unknown) => e);
    expect(XError.is(notFound, "ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE")).toBe(true);
    size = 10;
    expect(XError.is(await catalog.get("/d").catch((e: unknown) => e), "ERR_X_POLLING_CATALOG_HTTP")).toBe(
      true,
    );
  });
});

describe("the response cache is bounded by bytes", () => {
  /** A server answering `size` bytes with an ETag per path, recording each request's If-None-Match. */
  async function etagServer(sizes: Record<string, number>) {
    const conditional: Array<[string, string | undefined]> = [];
    const stub = await startStubServer((request, response) => {
      const path = (request.url ?? "").replace(/^\/ermrest\/catalog\/1/, "");
      const etag = `"v-${path}"`;
      const ifNoneMatch = request.headers["if-none-match"];
      conditional.push([path, ifNoneMatch]);
      if (ifNoneMatch === etag) {
        response.writeHead(304, { ETag: etag });
        response.end();
        return;
      }
      response.writeHead(200, { ETag: etag, "Content-Type": "application/json" });
      response.end(JSON.stringify("x".repeat((sizes[path] ?? 2) - 2)));
    });
    return { stub, conditional };
  }

  it("drops the least recently used entries past maxCacheBytes, and never caches a body over it", async () => {
    const { stub, conditional } = await etagServer({ "/a": 400, "/b": 400, "/c": 400, "/big": 1001 });
    await using _stub = stub;
    const catalog = catalogOf(stub.server, { maxCacheBytes: 1000 });
    for (const path of ["/a", "/b", "/a", "/c", "/a", "/b", "/big", "/big"]) await catalog.get(path);
    expect(conditional).toEqual([
      ["/a", undefined],
      ["/b", undefined],
      ["/a", '"v-/a"'], // cached, revalidated: 304
      ["/c", undefined], // 1 200 bytes with a, b, c: b (least recently used) goes
      ["/a", '"v-/a"'],
      ["/b", undefined], // gone; cached again, c goes
      ["/big", undefined],
      ["/big", undefined], // 1 001 bytes > 1 000: never cached
    ]);
  });

  it("replaces a cached entry by nothing when the new body is over maxCacheBytes", async () => {
    const sizes: Record<string, number> = { "/a": 100 };
    const { stub, conditional } = await etagServer(sizes);
    await using _stub = stub;
    const catalog = catalogOf(stub.server, { maxCacheBytes: 1000 });
    await catalog.get("/a");
    await catalog.get("/a", { headers: { "If-None-Match": '"other"' } }); // a fresh 200, now too large
    sizes["/a"] = 2000;
    await catalog.get("/a", { headers: { "If-None-Match": '"other"' } });
    await catalog.get("/a");
    expect(conditional.at(-1)).toEqual(["/a", undefined]);
  });
});
