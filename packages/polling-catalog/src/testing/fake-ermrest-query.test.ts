import { describe, expect, it } from "vitest";
import { startTestFake } from "../../test/helpers.js";
import { raw } from "../../test/http.js";
import type { FakeErmrestOptions } from "./index.js";

async function start(tables: FakeErmrestOptions["tables"]) {
  const fake = await startTestFake(tables);
  const get = async (path: string) => {
    const reply = await raw(fake.url, "GET", path);
    return reply.status === 200 ? (reply.json() as Array<Record<string, unknown>>) : reply.status;
  };
  return {
    fake,
    get,
    call: (method: string, path: string, body?: unknown) => raw(fake.url, method, path, { body }),
  };
}

const ids = (rows: Array<Record<string, unknown>> | number) =>
  typeof rows === "number" ? rows : rows.map((row) => row.id);

describe("entity GET", () => {
  const table = (): FakeErmrestOptions["tables"] => ({
    "S:T": {
      key: ["id"],
      columns: ["extra"],
      rows: [
        { id: 1, a: "x", b: "p" },
        { id: 2, a: "y", b: "p" },
        { id: 3, a: "x", b: "q" },
        { id: 4, a: null, b: "q" },
        { id: 5, a: "a b/c", b: "q" },
      ],
    },
  });

  it("returns full rows, null for missing values, in row order", async () => {
    const { get } = await start(table());
    const rows = (await get("/entity/S:T")) as Array<Record<string, unknown>>;
    expect(ids(rows)).toEqual([1, 2, 3, 4, 5]);
    expect(Object.keys(rows[0] ?? {}).sort()).toEqual([
      "RCB",
      "RCT",
      "RID",
      "RMB",
      "RMT",
      "a",
      "b",
      "extra",
      "id",
    ]);
    expect(rows[0]?.extra).toBeNull();
  });

  it("resolves a bare table name when one schema has it, 409 when several or none do", async () => {
    const { get } = await start({ ...table(), "A:U": { key: ["id"] }, "B:U": { key: ["id"] } });
    expect(ids(await get("/entity/T/id=1"))).toEqual([1]);
    expect(await get("/entity/U")).toBe(409);
    expect(await get("/entity/Nope")).toBe(409);
    expect(await get("/entity/S:Nope")).toBe(409);
  });

  it("ANDs path elements, binds & tighter than ;, negates with ! and groups with ( )", async () => {
    const { get } = await start(table());
    expect(ids(await get("/entity/S:T/a=x/b=q"))).toEqual([3]);
    expect(ids(await get("/entity/S:T/a=x&b=q;a=y"))).toEqual([2, 3]);
    expect(ids(await get("/entity/S:T/a=x&(b=q;a=y)"))).toEqual([3]);
    expect(ids(await get("/entity/S:T/!a=x"))).toEqual([2, 5]);
    expect(ids(await get("/entity/S:T/!(a=x;b=p)"))).toEqual([5]);
  });

  it("applies three-valued logic: a null value is unknown, also under !", async () => {
    const { get } = await start(table());
    expect(ids(await get("/entity/S:T/a::null::"))).toEqual([4]);
    expect(ids(await get("/entity/S:T/!a::null::"))).toEqual([1, 2, 3, 5]);
    expect(ids(await get("/entity/S:T/!a=y"))).toEqual([1, 3, 5]);
    expect(ids(await get("/entity/S:T/a=y;b=q"))).toEqual([2, 3, 4, 5]);
  });

  it("percent-decodes names and values after splitting", async () => {
    const { get } = await start({ "My Schema:My/Table": { key: ["id"], rows: [{ id: 1, "c;d": "a&b" }] } });
    expect(ids(await get("/entity/My%20Schema:My%2FTable/c%3Bd=a%26b"))).toEqual([1]);
  });

  it("matches text columns against strings, numbers and booleans", async () => {
    const { get } = await start({
      "S:T": {
        key: ["id"],
        rows: [
          { id: 1, v: "20" },
          { id: 2, v: 20 },
          { id: 3, v: true },
          { id: 4, v: 2.5 },
        ],
      },
    });
    expect(ids(await get("/entity/S:T/v=20"))).toEqual([1, 2]);
    expect(ids(await get("/entity/S:T/v=20.0"))).toEqual([2]);
    expect(ids(await get("/entity/S:T/v=true"))).toEqual([3]);
    expect(ids(await get("/entity/S:T/v=2.5"))).toEqual([4]);
  });

  it("parses filter values by column type, 400 when they do not parse", async () => {
    const { get } = await start({
      "S:T": {
        key: ["id"],
        types: { i: "int4", j: "int8", f: "float8", b: "boolean", t: "timestamptz", o: "jsonb" },
        rows: [
          { id: 1, i: 20, j: 5, f: 0.5, b: true, t: "2024-01-01T10:00:00Z", o: { x: 1, y: [1, 2] } },
          { id: 2, i: -3, j: 6, f: 1000, b: false, t: "2024-01-01T12:00:00+02:00", o: [1] },
          { id: 3, i: "20", f: "0.5", b: "true", t: "not a date", o: "x" },
        ],
      },
    });
    expect(ids(await get("/entity/S:T/i=20"))).toEqual([1]);
    expect(ids(await get("/entity/S:T/i=-3"))).toEqual([2]);
    expect(ids(await get("/entity/S:T/i=%2B20"))).toEqual([1]);
    expect(await get("/entity/S:T/i=20.0")).toBe(400);
    expect(await get("/entity/S:T/i=abc")).toBe(400);
    expect(ids(await get("/entity/S:T/i=3000000000"))).toEqual([]);
    expect(ids(await get("/entity/S:T/j=3000000000"))).toEqual([]);
    expect(ids(await get("/entity/S:T/f=.5"))).toEqual([1]);
    expect(ids(await get("/entity/S:T/f=1e3"))).toEqual([2]);
    expect(await get("/entity/S:T/f=x")).toBe(400);
    expect(ids(await get("/entity/S:T/b=TRUE"))).toEqual([1]);
    expect(ids(await get("/entity/S:T/b=0"))).toEqual([2]);
    expect(await get("/entity/S:T/b=yes")).toBe(400);
    expect(ids(await get("/entity/S:T/t=2024-01-01T10%3A00%3A00"))).toEqual([1, 2]);
    expect(ids(await get("/entity/S:T/t=2024-01-01%2011%3A00%2B01"))).toEqual([1, 2]);
    expect(await get("/entity/S:T/t=Jan%201%202024")).toBe(400);
    expect(ids(await get(`/entity/S:T/o=${encodeURIComponent('{"y":[1,2],"x":1}')}`))).toEqual([1]);
    expect(await get("/entity/S:T/o=%7Bbad")).toBe(400);
  });

  it("applies limit N, none, empty or bare; 409 on negative and 400 on anything else", async () => {
    const { get } = await start(table());
    expect(ids(await get("/entity/S:T?limit=2"))).toEqual([1, 2]);
    expect(ids(await get("/entity/S:T/a=x?limit=1"))).toEqual([1]);
    expect(ids(await get("/entity/S:T?limit=0"))).toEqual([]);
    for (const query of ["?limit=none", "?limit=", "?limit"])
      expect(ids(await get(`/entity/S:T${query}`))).toHaveLength(5);
    expect(await get("/entity/S:T?limit=-1")).toBe(409);
    expect(await get("/entity/S:T?limit=abc")).toBe(400);
    expect(await get("/entity/S:T?limit=1.5")).toBe(400);
  });

  it("sorts by @sort columns, nulls last ascending and first descending, ties in row order", async () => {
    const { get } = await start(table());
    expect(ids(await get("/entity/S:T@sort(a)"))).toEqual([5, 1, 3, 2, 4]);
    expect(ids(await get("/entity/S:T@sort(a::desc::)"))).toEqual([4, 2, 1, 3, 5]);
    expect(ids(await get("/entity/S:T@sort(b::desc::,id::desc::)"))).toEqual([5, 4, 3, 2, 1]);
    expect(ids(await get("/entity/S:T/b=q@sort(a)?limit=2"))).toEqual([5, 3]);
  });

  it("orders mixed JSON types and timestamps as documented", async () => {
    const { get } = await start({
      "S:T": {
        key: ["id"],
        types: { t: "timestamptz" },
        rows: [
          { id: 1, v: "b", t: "junk" },
          { id: 2, v: 10, t: "2024-01-02" },
          { id: 3, v: true, t: "2024-01-01T23:00:00-02:00" },
          { id: 4, v: [1], t: null },
          { id: 5, v: 9, t: "2024-01-01" },
          { id: 6, v: "B", t: "2024-01-01T12:00:00Z" },
        ],
      },
    });
    expect(ids(await get("/entity/S:T@sort(v)"))).toEqual([3, 5, 2, 6, 1, 4]);
    expect(ids(await get("/entity/S:T@sort(t)"))).toEqual([5, 6, 2, 3, 1, 4]);
  });

  it("answers 409 for an unknown sort column and 400 for a malformed sort list", async () => {
    const { get } = await start(table());
    expect(await get("/entity/S:T@sort(nope)")).toBe(409);
    for (const sort of ["@sort()", "@sort(a", "@sort(a::asc::)", "@sort(a,)"])
      expect(await get(`/entity/S:T${sort}`)).toBe(400);
  });

  it("answers 400 on URL and filter syntax errors, with a text/plain body", async () => {
    const { call } = await start(table());
    for (const path of [
      "/entity/S:T/a=x&",
      "/entity/S:T/(a=x",
      "/entity/S:T/",
      "/entity/S:T/a=%ZZ",
      "/nope/S:T",
    ]) {
      const reply = await call("GET", path);
      expect(reply.status, path).toBe(400);
      expect(reply.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    }
  });

  it("answers 404 outside catalog 1", async () => {
    const { fake } = await start(table());
    const base = new URL(fake.url).origin;
    expect((await raw(base, "GET", "/ermrest/catalog/2/entity/S:T")).status).toBe(404);
    expect((await raw(base, "GET", "/other")).status).toBe(404);
  });

  it("answers 501, naming the feature, for what it does not implement", async () => {
    const { call } = await start(table());
    const cases: Array<[string, string, RegExp]> = [
      ["GET", "/attribute/S:T/a", /attribute/],
      ["GET", "/aggregate/S:T/n:=cnt(*)", /aggregate/],
      ["GET", "/attributegroup/S:T/a", /attributegroup/],
      ["GET", "/entity/S:T/a=x/S:U", /joins/],
      ["GET", "/entity/S:T/(a)=(S:U:id)", /joins/],
      ["GET", "/entity/A:=S:T", /aliases/],
      ["GET", "/entity/S:T@sort(id)@after(3)", /paging/],
      ["GET", "/entity/S:T/a::gt::3", /::gt::/],
      ["DELETE", "/entity/S:T@sort(id)", /@sort/],
    ];
    for (const [method, path, feature] of cases) {
      const reply = await call(method, path);
      expect(reply.status, path).toBe(501);
      expect(reply.text).toMatch(feature);
    }
  });

  it("keeps rows in the order of their last write", async () => {
    const { get, call } = await start(table());
    await call("PUT", "/attributegroup/S:T/id;b", [
      { id: 4, b: "r" },
      { id: 2, b: "r" },
    ]);
    expect(ids(await get("/entity/S:T"))).toEqual([1, 3, 5, 2, 4]);
    await call("PUT", "/entity/S:T", [{ id: 1, a: "x", b: "p" }]);
    await call("POST", "/entity/S:T", [{ id: 9 }]);
    expect(ids(await get("/entity/S:T"))).toEqual([3, 5, 2, 4, 1, 9]);
  });
});
