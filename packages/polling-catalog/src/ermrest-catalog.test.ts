import { XError } from "@x/core";
import { recordingLogger } from "@x/test-support/recording-logger";
import { describe, expect, it } from "vitest";
import { closedPort, recordingFetch, startTestFake } from "../test/helpers.js";
import { startStubServer } from "../test/stub-server.js";
import {
  ConcurrentUpdate,
  ErmrestCatalog,
  type ErmrestCatalogOptions,
  ErrorCode,
  HTTPError,
  NotModified,
  PollingCatalogError,
} from "./index.js";

async function setup(options: Partial<ErmrestCatalogOptions> = {}) {
  const fake = await startTestFake({
    "S:Job": {
      key: ["id"],
      rows: [
        { id: 1, state: "new" },
        { id: 2, state: "new" },
      ],
    },
  });
  const recorder = recordingFetch();
  const catalog = new ErmrestCatalog({
    scheme: "http",
    server: fake.server,
    catalogId: fake.catalogId,
    fetch: recorder.fetch,
    ...options,
  });
  return { fake, catalog, calls: recorder.calls };
}

describe("construction", () => {
  it.each([
    ["scheme", { scheme: "ftp" }],
    ["server", { server: "" }],
    ["server", { server: "host/path" }],
    ["catalogId", { catalogId: "" }],
    ["catalogId", { catalogId: -1 }],
    ["catalogId", { catalogId: 1.5 }],
    ["fetch", { fetch: "nope" }],
    ["caching", { caching: "yes" }],
  ])("rejects a bad %s with ERR_X_POLLING_CATALOG_INVALID_OPTION naming it and its value", (option, bad) => {
    const options = { server: "example.org", catalogId: 1, ...bad } as unknown as ErmrestCatalogOptions;
    const error = (() => {
      try {
        new ErmrestCatalog(options);
      } catch (e) {
        return e;
      }
    })();
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    expect((error as Error).message).toContain(`invalid option ${option}: `);
    const value = (bad as Record<string, unknown>)[option];
    expect((error as Error).message).toContain(JSON.stringify(value) ?? String(value));
  });

  it("rejects credentials with a non-string field without echoing them", () => {
    const error = (() => {
      try {
        new ErmrestCatalog({ server: "h", catalogId: 1, credentials: { cookie: 12345678 } as never });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    expect(error?.message).toContain("credentials");
    expect(error?.message).not.toContain("12345678");
  });

  it("builds the base URL with an encoded catalog id and https by default", () => {
    expect(new ErmrestCatalog({ server: "h:8443", catalogId: "a/b" }).url).toBe(
      "https://h:8443/ermrest/catalog/a%2Fb",
    );
    expect(new ErmrestCatalog({ server: "h", catalogId: 0 }).url).toBe("https://h/ermrest/catalog/0");
  });
});

describe("requests", () => {
  it("appends the path verbatim, never encoding or normalising it", async () => {
    const { catalog, calls } = await setup();
    const path = "/entity/S:Job/state=a%20b%22c%2Fd";
    const response = await catalog.get(path);
    expect(response.url).toBe(`${catalog.url}${path}`);
    expect(calls[0]?.url).toBe(`${catalog.url}${path}`);
    await catalog.get("/entity/../entity/S:Job").catch(() => {});
    expect(calls[1]?.url).toBe(`${catalog.url}/entity/../entity/S:Job`);
  });

  it.each([[""], ["entity/S:Job"], [42]])(
    "rejects the path %j with ERR_X_POLLING_CATALOG_BAD_PATH and sends nothing",
    async (path) => {
      const { catalog, calls } = await setup();
      for (const call of [
        () => catalog.get(path as string),
        () => catalog.put(path as string, { json: [] }),
        () => catalog.post(path as string, { json: [] }),
        () => catalog.delete(path as string),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(XError.is(error, "ERR_X_POLLING_CATALOG_BAD_PATH")).toBe(true);
      }
      expect(calls).toHaveLength(0);
    },
  );

  it("sends Accept: */*, a fixed Deriva-Client-Context per catalog object, and credentials", async () => {
    const { fake, catalog, calls } = await setup({
      credentials: { cookie: "webauthn=s3cret", bearerToken: "t0ken" },
    });
    await catalog.get("/entity/S:Job");
    await catalog.post("/entity/S:Job", { json: [{ id: 3 }] });
    const [first, second] = calls;
    expect(first?.headers.get("accept")).toBe("*/*");
    expect(first?.headers.get("cookie")).toBe("webauthn=s3cret");
    expect(first?.headers.get("authorization")).toBe("Bearer t0ken");
    const context = JSON.parse(decodeURIComponent(first?.headers.get("deriva-client-context") ?? ""));
    expect(context).toEqual({ cid: expect.any(String), wid: expect.stringMatching(/^[0-9a-f]+$/) });
    expect(second?.headers.get("deriva-client-context")).toBe(first?.headers.get("deriva-client-context"));
    const other = new ErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: 1,
      fetch: recordingFetch().fetch,
    });
    expect(other).not.toBe(catalog);
    expect(fake.requests[0]?.headers["deriva-client-context"]).toBe(
      first?.headers.get("deriva-client-context"),
    );
  });

  it("rejects a PUT or POST without json, sending nothing", async () => {
    const { catalog, calls } = await setup();
    for (const call of [
      () => catalog.put("/entity/S:Job", undefined as never),
      () => catalog.post("/entity/S:Job", {} as never),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    }
    expect(calls).toHaveLength(0);
  });

  it("sends a JSON body, [] included, as application/json", async () => {
    const { catalog, calls } = await setup();
    await catalog.put("/attributegroup/S:Job/id;state", { json: [] });
    expect(calls[0]?.body).toBe("[]");
    expect(calls[0]?.headers.get("content-type")).toBe("application/json");
  });

  it("merges the caller's headers last and case-insensitively", async () => {
    const { catalog, calls } = await setup({ credentials: { cookie: "a=b" } });
    const response = await catalog.get("/entity/S:Job", {
      headers: { accept: "application/json", COOKIE: "c=d" },
    });
    expect(calls[0]?.headers.get("accept")).toBe("application/json");
    expect(calls[0]?.headers.get("cookie")).toBe("c=d");
    expect(response.etag).toContain(";application/json;");
  });

  it("keeps cookie and token out of errors and logs", async () => {
    const recorder = recordingLogger();
    const { fake, catalog } = await setup({
      credentials: { cookie: "webauthn=s3cret", bearerToken: "t0ken" },
      logger: recorder.logger,
    });
    fake.failNext(6);
    const error = (await catalog.get("/entity/S:Job").catch((e: unknown) => e)) as HTTPError;
    expect(error).toBeInstanceOf(HTTPError);
    const exposed = JSON.stringify([error, error.message, Object.entries(error), recorder.records]);
    expect(recorder.records.length).toBeGreaterThan(0);
    expect(exposed).not.toMatch(/s3cret|t0ken/);
  });
});

describe("responses and errors", () => {
  it("resolves with status, Headers, the verbatim ETag, the URL and a body read once", async () => {
    const { catalog } = await setup();
    const response = await catalog.get("/entity/S:Job");
    expect(response.status).toBe(200);
    expect(response.headers).toBeInstanceOf(Headers);
    expect(response.etag).toBe('"B+ddN9/bH60bI+dIiMBBtA==;*/*;1"');
    expect(response.url).toBe(`${catalog.url}/entity/S:Job`);
    expect(typeof response.text()).toBe("string");
    const rows = response.json() as Array<Record<string, unknown>>;
    rows[0] = {};
    expect((response.json() as unknown[])[0]).toMatchObject({ id: 1 });
  });

  it("rejects 400–599 with an HTTPError carrying status, URL, body and a short message", async () => {
    const { catalog } = await setup();
    const error = (await catalog.get("/entity/S:Nope").catch((e: unknown) => e)) as HTTPError;
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_HTTP")).toBe(true);
    expect(error.status).toBe(409);
    expect(error.url).toBe(`${catalog.url}/entity/S:Nope`);
    expect(error.body).toContain("does not exist");
    expect(error.message).toBe(`HTTP 409 ${error.url}: ${error.body}`);
    expect(error.response.status).toBe(409);
  });

  it("cuts the body in the message to 500 characters", async () => {
    const long = "x".repeat(800);
    await using stub = await startStubServer((_request, response) => {
      response.writeHead(400, { "Content-Type": "text/plain" });
      response.end(long);
    });
    const catalog = new ErmrestCatalog({ scheme: "http", server: stub.server, catalogId: 1 });
    const error = (await catalog.get("/x").catch((e: unknown) => e)) as HTTPError;
    expect(error.body).toBe(long);
    expect(error.message).toBe(`HTTP 400 ${catalog.url}/x: ${"x".repeat(500)}`);
  });

  it("rejects a 412 on a write with ConcurrentUpdate, an HTTPError", async () => {
    const { catalog } = await setup();
    const before = await catalog.get("/entity/S:Job");
    await catalog.post("/entity/S:Job", { json: [{ id: 3 }] });
    const error = await catalog
      .put("/attributegroup/S:Job/id;state", { json: [{ id: 1, state: "x" }], guardResponse: before })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConcurrentUpdate);
    expect(error).toBeInstanceOf(HTTPError);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_CONCURRENT_UPDATE")).toBe(true);
    expect((error as ConcurrentUpdate).status).toBe(412);
  });
});

describe("GET cache", () => {
  it("revalidates with If-None-Match and resolves a 304 with the cached entry", async () => {
    const { catalog, calls, fake } = await setup();
    const first = await catalog.get("/entity/S:Job");
    const second = await catalog.get("/entity/S:Job");
    expect(calls[1]?.headers.get("if-none-match")).toBe(first.etag);
    expect(fake.requests[1]?.status).toBe(304);
    expect(second.status).toBe(200);
    expect(second.text()).toBe(first.text());
    expect(second.etag).toBe(first.etag);
  });

  it("rejects with NotModified when asked, its response being the cached entry", async () => {
    const { catalog } = await setup();
    const first = await catalog.get("/entity/S:Job");
    const error = (await catalog
      .get("/entity/S:Job", { raiseNotModified: true })
      .catch((e: unknown) => e)) as NotModified;
    expect(error).toBeInstanceOf(NotModified);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_NOT_MODIFIED")).toBe(true);
    expect(error.status).toBe(304);
    expect(error.response).toBe(first);
  });

  it("adds no precondition when the caller sends one, and resolves a bare 304 as is", async () => {
    const { catalog, calls } = await setup();
    const first = await catalog.get("/entity/S:Job");
    const etag = first.etag as string;
    const response = await catalog.get("/entity/S:Job", { headers: { "if-none-match": etag } });
    expect(response.status).toBe(200);
    expect(calls[1]?.headers.get("if-none-match")).toBe(etag);
    await catalog.get("/entity/S:Job", { headers: { "If-Match": '"other"' } });
    expect(calls[2]?.headers.get("if-none-match")).toBeNull();
    const bare = await catalog.get("/entity/S:Job/id=1", { headers: { "If-None-Match": etag } });
    expect(bare.status).toBe(304);
    expect(bare.text()).toBe("");
    const raised = (await catalog
      .get("/entity/S:Job/id=2", { headers: { "If-None-Match": etag }, raiseNotModified: true })
      .catch((e: unknown) => e)) as NotModified;
    expect(raised.response.status).toBe(304);
  });

  it("with caching off stores nothing and never adds a conditional header", async () => {
    const { catalog, calls } = await setup({ caching: false });
    await catalog.get("/entity/S:Job");
    await catalog.get("/entity/S:Job");
    expect(calls[1]?.headers.get("if-none-match")).toBeNull();
  });

  it("never lets a 304 replace the cached entry, and writes do not invalidate it", async () => {
    const { catalog, fake } = await setup();
    const first = await catalog.get("/entity/S:Job");
    await catalog.get("/entity/S:Job");
    await catalog.get("/entity/S:Job");
    expect(fake.requests.map((request) => request.status)).toEqual([200, 304, 304]);
    await catalog.post("/entity/S:Job", { json: [{ id: 3 }] });
    const fresh = await catalog.get("/entity/S:Job");
    expect(fresh.status).toBe(200);
    expect(fresh.etag).not.toBe(first.etag);
    expect(fresh.json()).toHaveLength(3);
  });
});

describe("guarded writes", () => {
  it("sends If-Match from the guard's ETag on PUT and DELETE; a caller's If-Match wins; POST is never guarded", async () => {
    const { catalog, calls } = await setup();
    const guard = await catalog.get("/entity/S:Job");
    await catalog.put("/attributegroup/S:Job/id;state", { json: [], guardResponse: guard });
    expect(calls[1]?.headers.get("if-match")).toBe(guard.etag);
    await catalog.put("/attributegroup/S:Job/id;state", { json: [] });
    expect(calls[2]?.headers.get("if-match")).toBeNull();
    await catalog.put("/attributegroup/S:Job/id;state", {
      json: [],
      guardResponse: guard,
      headers: { "if-match": "*" },
    });
    expect(calls[3]?.headers.get("if-match")).toBe("*");
    await catalog.post("/entity/S:Job", { json: [{ id: 7 }] });
    expect(calls[4]?.headers.get("if-match")).toBeNull();
    const current = await catalog.get("/entity/S:Job");
    const deleted = await catalog.delete("/entity/S:Job/id=7", { guardResponse: current });
    expect(calls[6]?.headers.get("if-match")).toBe(current.etag);
    expect(deleted.status).toBe(204);
  });
});

describe("retries", () => {
  it("retries GET on 503, one fetch call per attempt, waiting less than 100 then 200 ms", async () => {
    const { catalog, calls, fake } = await setup();
    fake.failNext(2);
    const started = performance.now();
    const response = await catalog.get("/entity/S:Job");
    expect(response.status).toBe(200);
    expect(calls).toHaveLength(3);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("retries every method, POST included, on ERMrest's 503 Transaction aborted. for maxTransactionRetryMs", async () => {
    const { catalog, calls, fake } = await setup({ maxTransactionRetryMs: 1_500 });
    fake.transactionAbortRate = 1;
    const version = fake.version;
    const started = performance.now();
    const post = await catalog
      .post("/entity/S:Job", { json: [{ id: 3, state: "new" }] })
      .catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_400);
    expect((post as HTTPError).status).toBe(503);
    expect((post as HTTPError).body).toBe("Transaction aborted.\n");
    expect(calls.length).toBeGreaterThan(5); // more than the 5 tries of other failures
    expect(new Set(calls.map((call) => call.method))).toEqual(new Set(["POST"]));
    expect(fake.version).toBe(version);
    expect(fake.rows("S:Job")).toHaveLength(2);
    // Rolled-back tries, then the server commits: the call resolves.
    const from = fake.requests.length;
    const healing = new ErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      fetch: (input, init) => {
        if (fake.requests.length === from + 7) fake.transactionAbortRate = 0;
        return fetch(input, init);
      },
    });
    const response = await healing.put("/attributegroup/S:Job/id;state", { json: [{ id: 1, state: "x" }] });
    expect(response.status).toBe(200);
    expect(fake.requests.slice(from).map((r) => r.status)).toEqual([...Array(7).fill(503), 200]);
    const once = new ErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      maxTransactionRetryMs: 0,
    });
    fake.transactionAbortRate = 1;
    await expect(once.delete("/entity/S:Job/id=1")).rejects.toMatchObject({ status: 503 });
    expect(fake.requests.at(-1)?.method).toBe("DELETE");
    expect(fake.requests.at(-2)?.method).toBe("PUT");
  });

  it("every call of 8 writers × 25 PUTs to their own rows of one table resolves on the conflicting fake", async () => {
    const fake = await startTestFake({
      "S:Job": { key: ["id"], rows: Array.from({ length: 8 }, (_, i) => ({ id: i + 1, state: "idle" })) },
    });
    fake.writeDurationMs = 20; // calibrated: today's 5 quick tries lost about 6 % of these calls
    const results = await Promise.all(
      Array.from({ length: 8 }, async (_, writer) => {
        // Unpaced: this is about the retries of every rolled-back write, not about offering fewer of them.
        const client = new ErmrestCatalog({
          scheme: "http",
          server: fake.server,
          catalogId: fake.catalogId,
          writePacing: false,
        });
        const statuses: unknown[] = [];
        for (let i = 0; i < 25; i++) {
          const put = client.put("/attributegroup/S:Job/id;state", {
            json: [{ id: writer + 1, state: `${i}` }],
          });
          statuses.push(
            await put.then(
              (response) => response.status,
              (error: unknown) => error,
            ),
          );
        }
        return statuses;
      }),
    );
    expect(results.flat()).toEqual(Array(200).fill(200));
    expect(fake.requests.filter((r) => r.status === 503).length).toBeGreaterThan(20); // they did conflict
    expect(fake.rows("S:Job").map((row) => row.state)).toEqual(Array(8).fill("24"));
  }, 60_000);

  it("gives up after 5 tries with the last HTTPError", async () => {
    const { catalog, calls, fake } = await setup();
    fake.failNext(5, { status: 504 });
    const error = (await catalog.delete("/entity/S:Job/id=1").catch((e: unknown) => e)) as HTTPError;
    expect(error.status).toBe(504);
    expect(calls).toHaveLength(5);
    expect(fake.rows("S:Job")).toHaveLength(2);
  });

  it("retries a 500 of GET and PUT (connection pool exhausted), but not POST on 5xx", async () => {
    const { catalog, calls, fake } = await setup();
    fake.failNext(2, { status: 500 });
    expect((await catalog.get("/entity/S:Job")).status).toBe(200);
    expect(calls).toHaveLength(3);
    fake.failNext(1, { status: 500 });
    await catalog.put("/attributegroup/S:Job/id;state", { json: [{ id: 1, state: "x" }] });
    expect(calls).toHaveLength(5);
    fake.failNext(1, { status: 500 });
    const error = (await catalog.post("/entity/S:Job", { json: [] }).catch((e: unknown) => e)) as HTTPError;
    expect([error.status, error.response.method]).toEqual([500, "POST"]);
    fake.failNext(1, { status: 503 });
    expect(
      ((await catalog.post("/entity/S:Job", { json: [] }).catch((e: unknown) => e)) as HTTPError).status,
    ).toBe(503);
    expect(calls).toHaveLength(7);
  });

  it("keeps If-Match on a retried guarded PUT, so a lost committed response surfaces as ConcurrentUpdate", async () => {
    const { catalog, calls, fake } = await setup();
    const guard = await catalog.get("/entity/S:Job");
    fake.failNext(1, { afterCommit: true });
    const error = await catalog
      .put("/attributegroup/S:Job/id;state", { json: [{ id: 1, state: "claimed" }], guardResponse: guard })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConcurrentUpdate);
    expect(calls[2]?.headers.get("if-match")).toBe(guard.etag);
    expect(fake.rows("S:Job").find((row) => row.id === 1)?.state).toBe("claimed");
  });

  it("retries network errors and finally rejects with ERR_X_POLLING_CATALOG_NETWORK saying why", async () => {
    const port = await closedPort();
    const recorder = recordingFetch();
    const catalog = new ErmrestCatalog({
      scheme: "http",
      server: `127.0.0.1:${port}`,
      catalogId: 1,
      fetch: recorder.fetch,
    });
    const error = await catalog.get("/entity/S:Job").catch((e: unknown) => e);
    expect(XError.is(error, ErrorCode.NETWORK)).toBe(true);
    expect(error).toBeInstanceOf(PollingCatalogError);
    expect((error as Error).message).toBe(
      `GET http://127.0.0.1:${port}/ermrest/catalog/1/entity/S:Job: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect(recorder.calls).toHaveLength(5);
  });

  it("says why https to an http server fails", async () => {
    await using stub = await startStubServer((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json" }).end("[]");
    });
    const catalog = new ErmrestCatalog({ scheme: "https", server: stub.server, catalogId: 1 });
    const error = await catalog.get("/entity/S:Job").catch((e: unknown) => e);
    expect(XError.is(error, ErrorCode.NETWORK)).toBe(true);
    expect((error as Error).message).toBe(
      `GET https://${stub.server}/ermrest/catalog/1/entity/S:Job: fetch failed: TLS wrong version number (ERR_SSL_WRONG_VERSION_NUMBER; is the server plain http?)`,
    );
  });

  it("honours Retry-After in seconds", async () => {
    let hits = 0;
    await using stub = await startStubServer((_request, response) => {
      hits++;
      if (hits === 1) response.writeHead(503, { "Retry-After": "1" }).end("busy");
      else response.writeHead(200, { "Content-Type": "application/json" }).end("[]");
    });
    const catalog = new ErmrestCatalog({ scheme: "http", server: stub.server, catalogId: 1 });
    const started = performance.now();
    expect((await catalog.get("/x")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(hits).toBe(2);
  });

  it("stops retrying when the signal aborts", async () => {
    const { catalog, fake } = await setup();
    fake.failNext(5);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 50);
    await expect(catalog.get("/entity/S:Job", { signal: controller.signal })).rejects.toThrow("stop");
  });
});
