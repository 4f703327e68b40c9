import { describe, expect, it } from "vitest";
import { startTestFake } from "../../test/helpers.js";
import { type RawOptions, raw } from "../../test/http.js";
import { type FakeErmrestOptions, startFakeErmrest } from "./index.js";

async function start(tables: FakeErmrestOptions["tables"]) {
  const fake = await startTestFake(tables);
  const call = (method: string, path: string, body?: unknown, options: RawOptions = {}) =>
    raw(fake.url, method, path, { ...options, body });
  return { fake, call };
}

const jobs = (): FakeErmrestOptions["tables"] => ({
  "S:Job": {
    key: ["id"],
    rows: [
      { id: 1, state: "new", owner: null },
      { id: 2, state: "new", owner: null },
      { id: 3, state: "new", owner: null },
      { id: 4, state: "new", owner: null },
      { id: 5, state: "new", owner: null },
    ],
  },
});

describe("attributegroup PUT", () => {
  it("updates targets of matched rows, skips unmatched items, answers keys and targets in prior row order", async () => {
    const { fake, call } = await start(jobs());
    const before = fake.rows("S:Job");
    const reply = await call("PUT", "/attributegroup/S:Job/id;state", [
      { id: 5, state: "a", owner: "ignored" },
      { id: 2, state: "b" },
      { id: 42, state: "c" },
      { id: 4, state: "d" },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([
      { id: 2, state: "b" },
      { id: 4, state: "d" },
      { id: 5, state: "a" },
    ]);
    const after = fake.rows("S:Job");
    expect(after.map((row) => row.id)).toEqual([1, 3, 2, 4, 5]);
    const five = after.find((row) => row.id === 5);
    expect(five).toMatchObject({ state: "a", owner: null, RID: before[4]?.RID, RCT: before[4]?.RCT });
    expect(Date.parse(five?.RMT as string)).toBeGreaterThanOrEqual(Date.parse(before[4]?.RMT as string));
  });

  it("correlates on RID and on several key columns; a null key matches a stored null", async () => {
    const { fake, call } = await start({
      "S:T": {
        key: ["id"],
        columns: ["v"],
        rows: [
          { id: 1, g: "a", h: null },
          { id: 2, g: "a", h: "x" },
        ],
      },
    });
    const rid = fake.rows("S:T")[1]?.RID;
    expect((await call("PUT", "/attributegroup/S:T/RID;v", [{ RID: rid, v: 1 }])).json()).toEqual([
      { RID: rid, v: 1 },
    ]);
    expect((await call("PUT", "/attributegroup/S:T/g,h;v", [{ g: "a", h: null, v: 2 }])).json()).toEqual([
      { g: "a", h: null, v: 2 },
    ]);
    expect(fake.rows("S:T").map((row) => row.v)).toEqual([1, 2]);
  });

  it("compares key values as JSON values: the string 1 does not match the number 1", async () => {
    const { fake, call } = await start({
      "S:T": {
        key: ["id"],
        columns: ["v"],
        rows: [
          { id: 1, code: 1 },
          { id: 2, code: "1" },
          { id: 3, code: { a: 1 } },
        ],
      },
    });
    expect((await call("PUT", "/attributegroup/S:T/code;v", [{ code: "1", v: "s" }])).json()).toEqual([
      { code: "1", v: "s" },
    ]);
    expect((await call("PUT", "/attributegroup/S:T/code;v", [{ code: { a: 1 }, v: "o" }])).json()).toEqual([
      { code: { a: 1 }, v: "o" },
    ]);
    expect(fake.rows("S:T").map((row) => [row.id, row.v])).toEqual([
      [1, null],
      [2, "s"],
      [3, "o"],
    ]);
  });

  it("updates a row matched by several items once, by the last of them", async () => {
    const { fake, call } = await start({
      "S:T": { key: ["id"], columns: ["v"], rows: [{ id: 1, g: null }] },
    });
    const reply = await call("PUT", "/attributegroup/S:T/g;v", [
      { g: null, v: "first" },
      { g: null, v: "last" },
    ]);
    expect(reply.json()).toEqual([{ g: null, v: "last" }]);
    expect(fake.rows("S:T")[0]?.v).toBe("last");
  });

  it("fails the whole request with 409 on a null NOT NULL key or target, before 400 on duplicate keys", async () => {
    const { fake, call } = await start(jobs());
    expect((await call("PUT", "/attributegroup/S:Job/id;state", [{ state: "x" }])).status).toBe(409);
    expect((await call("PUT", "/attributegroup/S:Job/state;id", [{ state: "new", id: null }])).status).toBe(
      409,
    );
    const both = [{ id: 1, state: "x" }, { id: 1, state: "y" }, { state: "z" }];
    expect((await call("PUT", "/attributegroup/S:Job/id;state", both)).status).toBe(409);
    expect((await call("PUT", "/attributegroup/S:Job/id;state", both.slice(0, 2))).status).toBe(400);
    expect(fake.version).toBe(1);
    expect(fake.rows("S:Job").every((row) => row.state === "new")).toBe(true);
  });

  it("counts non-object items as empty objects and moves the version even when nothing matched", async () => {
    const { fake, call } = await start({
      "S:T": { key: ["id"], columns: ["v"], rows: [{ id: 1, g: null }] },
    });
    const reply = await call("PUT", "/attributegroup/S:T/g;v", [7]);
    expect(reply.json()).toEqual([{ g: null, v: null }]);
    expect((await call("PUT", "/attributegroup/S:T/id;v", [{ id: 9, v: 1 }])).json()).toEqual([]);
    expect(fake.version).toBe(3);
  });

  it("refuses 400 for filters and missing targets, 409 for system targets and duplicate keys it would create", async () => {
    const { call } = await start(jobs());
    expect((await call("PUT", "/attributegroup/S:Job/id=1/id;state", [])).status).toBe(400);
    expect((await call("PUT", "/attributegroup/S:Job/id", [])).status).toBe(400);
    expect((await call("PUT", "/attributegroup/S:Job/id;RMT", [])).status).toBe(409);
    expect((await call("PUT", "/attributegroup/S:Job/state;id", [{ state: "new", id: 7 }])).status).toBe(409);
  });
});

describe("attributegroup PUT with renamed columns", () => {
  it("reads renamed key and target columns from their body names, so a column can be key and target", async () => {
    const { fake, call } = await start(jobs());
    const reply = await call("PUT", "/attributegroup/S:Job/id,expected:=state;state,who:=owner", [
      { id: 1, expected: "new", state: "running", who: "a" },
      { id: 2, expected: "done", state: "running", who: "b" },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([{ id: 1, expected: "new", state: "running", who: "a" }]);
    const rows = fake.rows("S:Job");
    expect(rows.find((row) => row.id === 1)).toMatchObject({ state: "running", owner: "a" });
    expect(rows.find((row) => row.id === 2)).toMatchObject({ state: "new", owner: null });
  });

  it("makes a compare-and-set: the second of two identical claims matches nothing", async () => {
    const { fake, call } = await start(jobs());
    const claim = (owner: string) =>
      call("PUT", "/attributegroup/S:Job/id,was:=state;state,owner", [
        { id: 3, was: "new", state: "taken", owner },
      ]);
    expect((await claim("a")).json()).toHaveLength(1);
    expect((await claim("b")).json()).toEqual([]);
    expect(fake.rows("S:Job").find((row) => row.id === 3)).toMatchObject({ state: "taken", owner: "a" });
  });

  it("answers 400 for a malformed rename or a body name used twice, 409 for an unknown column", async () => {
    const { call } = await start(jobs());
    expect((await call("PUT", "/attributegroup/S:Job/id,:=state;state", [])).status).toBe(400);
    expect((await call("PUT", "/attributegroup/S:Job/id,a:=b:=state;state", [])).status).toBe(400);
    expect((await call("PUT", "/attributegroup/S:Job/id,state:=owner;state", [])).status).toBe(400);
    expect((await call("PUT", "/attributegroup/S:Job/id,was:=nope;state", [])).status).toBe(409);
  });
});

describe("entity POST", () => {
  it("inserts full rows in input order, assigning system columns, and answers 200", async () => {
    const { fake, call } = await start({ "S:T": { key: ["id"], rows: [{ id: 1 }] } });
    const reply = await call("POST", "/entity/S:T", [
      { id: 3, RID: "mine", RCT: "1999-01-01", fresh: "x" },
      { id: 2 },
    ]);
    expect(reply.status).toBe(200);
    const rows = reply.json() as Array<Record<string, unknown>>;
    expect(rows.map((row) => row.id)).toEqual([3, 2]);
    expect(rows[0]?.RID).not.toBe("mine");
    expect(rows[0]?.RCT).not.toBe("1999-01-01");
    expect(rows[1]).toMatchObject({ fresh: null, RCB: null, RMB: null });
    expect(fake.rows("S:T").map((row) => row.id)).toEqual([1, 3, 2]);
    expect(new Set(fake.rows("S:T").map((row) => row.RID)).size).toBe(3);
  });

  it("checks null keys (409), then duplicates in the input (400), then stored keys (409)", async () => {
    const { fake, call } = await start({ "S:T": { key: ["id"], rows: [{ id: 1 }] } });
    expect((await call("POST", "/entity/S:T", [{ id: 2 }, { id: 2 }, {}])).status).toBe(409);
    const duplicate = await call("POST", "/entity/S:T", [{ id: 1 }, { id: 2 }, { id: 2 }]);
    expect(duplicate.status).toBe(400);
    expect(duplicate.text.trim()).toBe("Multiple input rows share the same unique key information.");
    expect((await call("POST", "/entity/S:T", [{ id: 5 }, { id: 1 }])).status).toBe(409);
    expect(fake.rows("S:T")).toHaveLength(1);
    expect(fake.version).toBe(1);
  });

  it("inserts any number of rows into a table keyed by RID alone", async () => {
    const { fake, call } = await start({ "S:Log": { key: ["RID"] } });
    expect((await call("POST", "/entity/S:Log", [{ m: 1 }, { m: 1 }, 5])).status).toBe(200);
    expect(fake.rows("S:Log")).toHaveLength(3);
  });
});

describe("entity PUT", () => {
  it("replaces matched rows, inserts the others, and answers updated rows without system columns then inserted full rows", async () => {
    const { fake, call } = await start({
      "S:T": {
        key: ["id"],
        rows: [
          { id: 1, a: "x", b: "y" },
          { id: 2, a: "x", b: "y" },
        ],
      },
    });
    const rid = fake.rows("S:T")[1]?.RID;
    const reply = await call("PUT", "/entity/S:T", [
      { id: 9, a: "new" },
      { id: 2, a: "z", RID: "ignored" },
      { id: 1, b: "w" },
    ]);
    expect(reply.status).toBe(200);
    const [first, second, inserted] = reply.json() as Array<Record<string, unknown>>;
    expect(first).toEqual({ id: 1, a: null, b: "w" });
    expect(second).toEqual({ id: 2, a: "z", b: null });
    expect(inserted).toMatchObject({ id: 9, a: "new", b: null, RCB: null });
    expect(fake.rows("S:T").map((row) => row.id)).toEqual([1, 2, 9]);
    expect(fake.rows("S:T")[1]?.RID).toBe(rid);
  });

  it("answers 409 for a table without client key or a null key, 400 for duplicate keys or filters", async () => {
    const { fake, call } = await start({
      "S:T": { key: ["id"], rows: [{ id: 1 }] },
      "S:Log": { key: ["RID"] },
    });
    expect((await call("PUT", "/entity/S:Log", [{ m: 1 }])).status).toBe(409);
    expect((await call("PUT", "/entity/S:T", [{ id: 1 }, { id: 1 }, { a: 1 }])).status).toBe(409);
    expect((await call("PUT", "/entity/S:T", [{ id: 1 }, { id: 1 }])).status).toBe(400);
    expect((await call("PUT", "/entity/S:T/id=1", [{ id: 1 }])).status).toBe(400);
    expect(fake.version).toBe(1);
  });
});

describe("DELETE", () => {
  it("deletes matching rows with 204, all rows without a filter, and 404 without a version change when none match", async () => {
    const { fake, call } = await start(jobs());
    const reply = await call("DELETE", "/entity/S:Job/id=2;id=4");
    expect(reply.status).toBe(204);
    expect(reply.text).toBe("");
    expect(fake.rows("S:Job").map((row) => row.id)).toEqual([1, 3, 5]);
    expect((await call("DELETE", "/entity/S:Job/id=2")).status).toBe(404);
    expect(fake.version).toBe(2);
    expect((await call("DELETE", "/entity/S:Job")).status).toBe(204);
    expect(fake.rows("S:Job")).toEqual([]);
  });
});

describe("request bodies", () => {
  it("accepts application/json in any case and with parameters; 415 otherwise", async () => {
    const { call } = await start(jobs());
    const put = (contentType: string) => call("PUT", "/attributegroup/S:Job/id;state", "[]", { contentType });
    expect((await put("Application/JSON; charset=utf-8")).status).toBe(200);
    for (const type of ["text/csv", "application/x-json-stream", "text/plain"]) {
      const reply = await put(type);
      expect(reply.status, type).toBe(415);
      expect(reply.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    }
  });

  it("answers 400 to a body that is not JSON or not an array", async () => {
    const { fake, call } = await start(jobs());
    expect((await call("POST", "/entity/S:Job", "{oops")).status).toBe(400);
    expect((await call("POST", "/entity/S:Job", { id: 7 })).status).toBe(400);
    expect(fake.version).toBe(1);
  });
});

describe("write serialization (writeDurationMs)", () => {
  const twoTables = (): FakeErmrestOptions["tables"] => ({
    ...jobs(),
    "S:Other": { key: ["id"], rows: [{ id: 1, state: "new" }] },
  });

  it("of two overlapping writes to one table, whatever rows they touch, one commits and one is aborted", async () => {
    const { fake, call } = await start(jobs());
    fake.writeDurationMs = 200;
    const replies = await Promise.all([
      call("PUT", "/attributegroup/S:Job/id;state", [{ id: 1, state: "a" }]),
      call("PUT", "/attributegroup/S:Job/id;state", [{ id: 2, state: "b" }]),
    ]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 503]);
    expect(replies.find((reply) => reply.status === 503)?.text).toBe("Transaction aborted.\n");
    expect(fake.version).toBe(2);
    expect(fake.rows("S:Job").filter((row) => row.state !== "new")).toHaveLength(1);
  });

  it("a PUT that matches nothing is still a committed write: it conflicts and bumps the version", async () => {
    const { fake, call } = await start(jobs());
    fake.writeDurationMs = 200;
    const [empty, real] = await Promise.all([
      call("PUT", "/attributegroup/S:Job/id,expected:=state;state", [
        { id: 1, expected: "gone", state: "x" },
      ]),
      call("PUT", "/attributegroup/S:Job/id;state", [{ id: 2, state: "b" }]),
    ]);
    expect([empty?.status, real?.status].sort()).toEqual([200, 503]);
    if (empty?.status === 200) expect(empty.json()).toEqual([]);
    expect(fake.version).toBe(2);
  });

  it("writes to different tables, and sequential writes, never conflict; reads never wait", async () => {
    const { fake, call } = await start(twoTables());
    fake.writeDurationMs = 200;
    const replies = await Promise.all([
      call("PUT", "/attributegroup/S:Job/id;state", [{ id: 1, state: "a" }]),
      call("PUT", "/attributegroup/S:Other/id;state", [{ id: 1, state: "b" }]),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200]);
    expect((await call("POST", "/entity/S:Job", [{ id: 9 }])).status).toBe(200);
    expect((await call("DELETE", "/entity/S:Job/id=9")).status).toBe(204);
    const started = performance.now();
    expect((await call("GET", "/entity/S:Job")).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(100);
    expect(fake.version).toBe(5);
  });

  it("takes the duration as an option (default 20 ms), settable, validated up to the longest timer", async () => {
    await using fake = await startFakeErmrest({ tables: jobs(), writeDurationMs: 0 });
    expect(fake.writeDurationMs).toBe(0);
    fake.writeDurationMs = 25;
    expect(fake.toJSON().writeDurationMs).toBe(25);
    expect(() => {
      fake.writeDurationMs = -1;
    }).toThrow(/invalid option writeDurationMs/);
    await expect(startFakeErmrest({ tables: jobs(), writeDurationMs: 2 ** 31 })).rejects.toThrow(
      /invalid option writeDurationMs/,
    );
    await using defaults = await startFakeErmrest({ tables: jobs() });
    expect(defaults.writeDurationMs).toBe(20);
  });
});

describe("transactionAbortRate", () => {
  it("answers that share of writes 503 Transaction aborted. with nothing changed, and never a GET", async () => {
    const { fake, call } = await start(jobs());
    fake.transactionAbortRate = 1;
    const version = fake.version;
    const put = await call("PUT", "/attributegroup/S:Job/id;state", [{ id: 1, state: "x" }]);
    expect(put.status).toBe(503);
    expect(put.text).toBe("Transaction aborted.\n");
    expect(put.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect((await call("POST", "/entity/S:Job", [{ id: 9 }])).status).toBe(503);
    expect((await call("DELETE", "/entity/S:Job/id=1")).status).toBe(503);
    expect((await call("GET", "/entity/S:Job")).status).toBe(200);
    expect(fake.version).toBe(version);
    expect(fake.rows("S:Job").map((row) => row.state)).toEqual(["new", "new", "new", "new", "new"]);
    fake.transactionAbortRate = 0.5;
    let aborted = 0;
    for (let i = 0; i < 200; i++) {
      if ((await call("PUT", "/attributegroup/S:Job/id;state", [{ id: 1, state: `s${i}` }])).status === 503)
        aborted++;
    }
    expect(aborted).toBeGreaterThan(60);
    expect(aborted).toBeLessThan(140);
    expect(fake.version).toBe(version + 200 - aborted);
  });

  it("takes the rate as an option and validates it", async () => {
    await using fake = await startFakeErmrest({ tables: jobs(), transactionAbortRate: 0.1 });
    expect(fake.transactionAbortRate).toBe(0.1);
    expect(() => {
      fake.transactionAbortRate = 1.5;
    }).toThrow(/invalid option transactionAbortRate/);
    await expect(startFakeErmrest({ tables: jobs(), transactionAbortRate: -1 })).rejects.toThrow(
      /invalid option transactionAbortRate/,
    );
  });
});

describe("failNext", () => {
  it("answers the next requests with the injected status, then recovers", async () => {
    const { fake, call } = await start(jobs());
    fake.failNext(2);
    const first = await call("GET", "/entity/S:Job");
    expect(first.status).toBe(503);
    expect(first.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect((await call("PUT", "/attributegroup/S:Job/id;state", [{ id: 1, state: "x" }])).status).toBe(503);
    expect(fake.version).toBe(1);
    expect((await call("GET", "/entity/S:Job")).status).toBe(200);
    fake.failNext(1, { status: 502 });
    expect((await call("GET", "/entity/S:Job")).status).toBe(502);
  });

  it("applies a write before the error with afterCommit: the lost-response hazard", async () => {
    const { fake, call } = await start(jobs());
    fake.failNext(1, { afterCommit: true });
    expect((await call("PUT", "/attributegroup/S:Job/id;state", [{ id: 1, state: "x" }])).status).toBe(503);
    expect(fake.version).toBe(2);
    expect(fake.rows("S:Job").find((row) => row.id === 1)?.state).toBe("x");
  });

  it("records every request with its status", async () => {
    const { fake, call } = await start(jobs());
    await call("GET", "/entity/S:Job?limit=1", undefined, { headers: { "X-Test": "1" } });
    expect(fake.requests).toEqual([
      expect.objectContaining({ method: "GET", url: "/ermrest/catalog/1/entity/S:Job?limit=1", status: 200 }),
    ]);
    expect(fake.requests[0]?.headers["x-test"]).toBe("1");
  });
});
