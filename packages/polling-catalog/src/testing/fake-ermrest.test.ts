import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { startTestFake } from "../../test/helpers.js";
import { raw } from "../../test/http.js";
import { type FakeErmrestOptions, startFakeErmrest } from "./index.js";

async function start(tables: FakeErmrestOptions["tables"]) {
  const fake = await startTestFake(tables);
  const call = (method: string, path: string, options?: Parameters<typeof raw>[3]) =>
    raw(fake.url, method, path, options);
  return { fake, call };
}

const jobs = () => ({
  "S:Job": {
    key: ["id"],
    rows: [
      { id: 1, state: "new", n: 10 },
      { id: 2, state: "new", n: null },
      { id: 3, state: "done", n: 30 },
    ],
  },
});

describe("startFakeErmrest", () => {
  it("serves catalog 1 on 127.0.0.1 with an ephemeral port", async () => {
    const { fake } = await start(jobs());
    expect(fake.server).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(fake.server).not.toBe("127.0.0.1:0");
    expect(fake.catalogId).toBe("1");
    expect(fake.url).toBe(`http://${fake.server}/ermrest/catalog/1`);
    expect(fake.version).toBe(1);
  });

  it("gives every row the system columns, keeps a given RID and returns deep copies", async () => {
    const { fake } = await start({ "S:T": { key: ["id"], rows: [{ id: 1, RID: "MY-RID" }, { id: 2 }] } });
    const rows = fake.rows("S:T");
    expect(rows[0]).toMatchObject({ id: 1, RID: "MY-RID", RCB: null, RMB: null });
    expect(rows[1]?.RID).toEqual(expect.any(String));
    expect(rows[1]?.RID).not.toBe("MY-RID");
    expect(Number.isNaN(Date.parse(rows[0]?.RCT as string))).toBe(false);
    (rows[0] as Record<string, unknown>).id = 99;
    expect(fake.rows("S:T")[0]?.id).toBe(1);
    expect(() => fake.rows("S:Nope")).toThrow(/unknown table/);
  });

  it.each([
    ["an unknown type", { "S:T": { key: ["id"], types: { id: "integer" } } }, /types/],
    ["a repeated key", { "S:T": { key: ["id"], rows: [{ id: 1 }, { id: 1 }] } }, /repeats the key/],
    ["a null client key", { "S:T": { key: ["id"], rows: [{ id: null }] } }, /no value for key column/],
    ["a missing client key", { "S:T": { key: ["a", "b"], rows: [{ a: 1 }] } }, /no value for key column b/],
    ["a table name without schema", { T: { key: ["id"] } }, /tables/],
    ["an empty key", { "S:T": { key: [] } }, /key/],
  ])("rejects %s", async (_what, tables, message) => {
    const error = await startFakeErmrest({ tables } as never).catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    expect((error as Error).message).toMatch(message);
  });

  it("closes idempotently, promptly, with keep-alive connections open, and supports await using", async () => {
    let url = "";
    {
      await using fake = await startFakeErmrest({ tables: jobs() });
      url = fake.url;
      expect((await raw(url, "GET", "/entity/S:Job")).status).toBe(200);
      const started = Date.now();
      await Promise.all([fake.close(), fake.close()]);
      await fake.close();
      expect(Date.now() - started).toBeLessThan(2_000);
    }
    await expect(raw(url, "GET", "/entity/S:Job")).rejects.toThrow();
  });
});

describe("restart", () => {
  it("closes every connection, refuses for downMs, then serves the same data on the same port", async () => {
    const { fake, call } = await start(jobs());
    await call("PUT", "/attributegroup/S:Job/id;state", { body: [{ id: 1, state: "kept" }] });
    const version = fake.version;
    const server = fake.server;
    const started = performance.now();
    const restarted = fake.restart(400);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await call("GET", "/entity/S:Job").catch((e: unknown) => e);
    expect((refused as Error & { cause?: { code?: string } }).cause?.code).toBe("ECONNREFUSED");
    await restarted;
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(fake.server).toBe(server);
    const reply = await call("GET", "/entity/S:Job/id=1");
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([expect.objectContaining({ id: 1, state: "kept" })]);
    expect(fake.version).toBe(version);
  });

  it("rejects a bad downMs and does nothing after close", async () => {
    const { fake } = await start(jobs());
    await expect(fake.restart(-1)).rejects.toThrow(/invalid option downMs/);
    await expect(fake.restart(2 ** 31)).rejects.toThrow(/invalid option downMs: 2147483648/);
    await fake.close();
    await fake.restart(10);
    await expect(fetch(`${fake.url}/entity/S:Job`)).rejects.toThrow();
  });
});

describe("version and ETag", () => {
  it("answers data with a catalog-wide ETag that folds in the Accept header, and Vary: accept", async () => {
    const { call } = await start(jobs());
    const reply = await call("GET", "/entity/S:Job");
    expect(reply.headers.get("etag")).toBe('"B+ddN9/bH60bI+dIiMBBtA==;*/*;1"');
    expect(reply.headers.get("vary")).toBe("accept");
    expect(reply.headers.get("content-type")).toBe("application/json");
    const json = await call("GET", "/entity/S:Job", { headers: { Accept: "application/json" } });
    expect(json.headers.get("etag")).toBe('"B+ddN9/bH60bI+dIiMBBtA==;application/json;1"');
  });

  it("moves the version once per successful write, [] included, never on GETs or failures", async () => {
    const { fake, call } = await start({ ...jobs(), "S:Other": { key: ["id"] } });
    await call("GET", "/entity/S:Job");
    expect(fake.version).toBe(1);
    expect((await call("PUT", "/attributegroup/S:Job/id;state", { body: [] })).status).toBe(200);
    expect(fake.version).toBe(2);
    expect((await call("POST", "/entity/S:Other", { body: [] })).status).toBe(200);
    expect(fake.version).toBe(3);
    expect((await call("POST", "/entity/S:Job", { body: [{ id: 1 }] })).status).toBe(409);
    expect((await call("DELETE", "/entity/S:Job/id=99")).status).toBe(404);
    expect(fake.version).toBe(3);
  });

  it("answers a write with the ETag a GET would return right after it, on every table", async () => {
    const { call } = await start({ ...jobs(), "S:Other": { key: ["id"] } });
    const write = await call("POST", "/entity/S:Other", { body: [{ id: 1 }] });
    const read = await call("GET", "/entity/S:Job");
    expect(write.headers.get("etag")).toBe(read.headers.get("etag"));
    expect(read.headers.get("etag")).toMatch(/;2"$/);
  });
});

describe("preconditions", () => {
  const current = '"B+ddN9/bH60bI+dIiMBBtA==;*/*;1"';

  it("answers a GET whose If-None-Match matches with 304, the ETag and no body", async () => {
    const { call } = await start(jobs());
    const reply = await call("GET", "/entity/S:Job", { headers: { "If-None-Match": current } });
    expect(reply.status).toBe(304);
    expect(reply.text).toBe("");
    expect(reply.headers.get("etag")).toBe(current);
  });

  it.each([
    ["a list", `"x", ${current}`],
    ["a weak tag", `W/${current}`],
    ["a -gzip suffix", current.replace(/"$/, '-gzip"')],
    ["*", "*"],
  ])("matches If-None-Match with %s", async (_what, tag) => {
    const { call } = await start(jobs());
    expect((await call("GET", "/entity/S:Job", { headers: { "If-None-Match": tag } })).status).toBe(304);
  });

  it("answers a GET whose If-Match fails with 304 too", async () => {
    const { call } = await start(jobs());
    const reply = await call("GET", "/entity/S:Job", { headers: { "If-Match": '"stale"' } });
    expect(reply.status).toBe(304);
    expect(reply.headers.get("etag")).toBe(current);
    expect((await call("GET", "/entity/S:Job", { headers: { "If-Match": current } })).status).toBe(200);
  });

  it("keeps an ETag whose Accept holds a comma or a quote one tag, matched by If-Match (a fuzzer's find)", async () => {
    const { call } = await start(jobs());
    const accept = 'text/html, application/json;q="0.9"';
    const reply = await call("GET", "/entity/S:Job", { headers: { Accept: accept } });
    const etag = reply.headers.get("etag") ?? "";
    expect(etag).toBe('"B+ddN9/bH60bI+dIiMBBtA==;text/html, application/json;q=%220.9%22;1"');
    const put = await call("PUT", "/attributegroup/S:Job/id;state", {
      body: [{ id: 1, state: "x" }],
      headers: { Accept: accept, "If-Match": `"other", ${etag}` },
    });
    expect(put.status).toBe(200);
  });

  it("answers a failed write precondition with 412, a text body, the ETag and no change", async () => {
    const { fake, call } = await start(jobs());
    const reply = await call("PUT", "/attributegroup/S:Job/id;state", {
      body: [{ id: 1, state: "x" }],
      headers: { "If-Match": '"stale"' },
    });
    expect(reply.status).toBe(412);
    expect(reply.text.trim()).toBe("Resource state does not match requested preconditions.");
    expect(reply.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(reply.headers.get("etag")).toBe(current);
    expect(fake.version).toBe(1);
    expect(fake.rows("S:Job")[0]?.state).toBe("new");
    const star = await call("DELETE", "/entity/S:Job", { headers: { "If-None-Match": "*" } });
    expect(star.status).toBe(412);
    const ok = await call("PUT", "/attributegroup/S:Job/id;state", {
      body: [{ id: 1, state: "x" }],
      headers: { "If-Match": `"other", ${current}` },
    });
    expect(ok.status).toBe(200);
  });

  it("evaluates preconditions before the faults ERMrest finds when the query runs", async () => {
    const { call } = await start({ "S:T": { key: ["id"], types: { n: "int4" }, rows: [{ id: 1, n: 1 }] } });
    const stale = { "If-Match": '"stale"' };
    expect((await call("GET", "/entity/S:T?limit=-1", { headers: stale })).status).toBe(304);
    expect((await call("GET", "/entity/S:T/n=abc", { headers: stale })).status).toBe(304);
    expect((await call("GET", "/entity/S:T@sort(nope)", { headers: stale })).status).toBe(304);
    expect((await call("POST", "/entity/S:T", { body: "not json", headers: stale })).status).toBe(412);
    expect(
      (await call("POST", "/entity/S:T", { body: "[]", contentType: "text/csv", headers: stale })).status,
    ).toBe(412);
  });

  it("resolves the table and the filter, key and target columns before preconditions", async () => {
    const { call } = await start(jobs());
    const stale = { "If-Match": '"stale"' };
    expect((await call("GET", "/entity/S:Job/nope=1", { headers: stale })).status).toBe(409);
    expect((await call("GET", "/entity/S:Nope", { headers: stale })).status).toBe(409);
    expect((await call("PUT", "/attributegroup/S:Job/id;nope", { body: [], headers: stale })).status).toBe(
      409,
    );
    expect((await call("GET", "/entity/S:Job?limit=abc", { headers: stale })).status).toBe(400);
  });
});
