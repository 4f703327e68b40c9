import { createHash } from "node:crypto";
import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { countKeys, exchangeOf, routingKey, splitRanges, workerQueues } from "./routing.js";
import { RelationType } from "./types.js";

const id = (c: string) => c.repeat(40).slice(0, 40);
const bad = (fn: () => unknown, message?: RegExp) => {
  try {
    fn();
  } catch (e) {
    expect(XError.is(e, "ERR_X_RMQ_STORAGE_BAD_INPUT")).toBe(true);
    if (message) expect((e as Error).message).toMatch(message);
    return;
  }
  throw new Error("expected ERR_X_RMQ_STORAGE_BAD_INPUT");
};

describe("routingKey", () => {
  it("uses the first hex digit of the id", () => {
    expect(routingKey("content_add", `c0d8${"0".repeat(36)}`)).toBe("content_add.unknown.c");
    expect(routingKey("content_add", `0f${"e".repeat(38)}`)).toBe("content_add.unknown.0");
    expect(routingKey("relation_add", id("a"), RelationType.DIR_IN_REV)).toBe(
      "relation_add.directory_in_revision.a",
    );
  });

  it("requires a relation exactly for relation_add", () => {
    bad(() => routingKey("relation_add", id("a")), /'relation_add' requires 'relation' to be provided/);
    bad(
      () => routingKey("content_add", id("a"), RelationType.CNT_IN_DIR),
      /'content_add' requires 'relation' to be undefined/,
    );
  });

  it("rejects unknown methods, relations and bad ids, naming the value", () => {
    bad(() => routingKey("content_get", id("a")), /content_get/);
    bad(() => routingKey("relation_add", id("a"), "nope" as RelationType), /nope/);
    for (const value of [id("A"), "abc", `${id("a")}0`, 42, null])
      bad(() => routingKey("content_add", value as string));
  });

  it("truncates the offending value to 80 characters", () => {
    try {
      routingKey("content_add", "x".repeat(500));
    } catch (e) {
      expect((e as Error).message).toContain("x".repeat(60));
      expect((e as Error).message.length).toBeLessThan(160);
    }
  });
});

describe("topology", () => {
  it("has 160 queues named like their routing key, on the five exchanges of the routing table", () => {
    expect(workerQueues).toHaveLength(160);
    expect(new Set(workerQueues.map((q) => q.name)).size).toBe(160);
    const perExchange: Record<string, number> = {};
    for (const q of workerQueues) perExchange[q.exchange] = (perExchange[q.exchange] ?? 0) + 1;
    expect(perExchange).toEqual({
      content: 48,
      directory: 32,
      revision: 48,
      origin: 16,
      location: 16,
    });
    for (const q of workerQueues) expect(exchangeOf(q.method, q.relation)).toBe(q.exchange);
    expect(exchangeOf("relation_add", "directory_in_revision")).toBe("directory");
  });
});

describe("splitRanges", () => {
  it("splits a Map by first hex digit, keys in first-seen order, values as given", () => {
    const date = { date: 5n, flat: true };
    const out = splitRanges(
      new Map([
        [id("b"), date],
        [id("a"), date],
        [`b${"0".repeat(39)}`, date],
      ]),
      "directory_add",
    );
    expect([...out.keys()]).toEqual(["directory_add.unknown.b", "directory_add.unknown.a"]);
    expect(out.get("directory_add.unknown.b")).toEqual([
      [id("b"), date],
      [`b${"0".repeat(39)}`, date],
    ]);
    expect(out.get("directory_add.unknown.b")?.[0]?.[1]).toBe(date);
  });

  it("turns bare ids into distinct [id] items for any entity method", () => {
    const out = splitRanges([id("1"), id("2"), id("1")], "revision_add");
    expect(out).toEqual(
      new Map([
        ["revision_add.unknown.1", [[id("1")]]],
        ["revision_add.unknown.2", [[id("2")]]],
      ]),
    );
    expect(splitRanges([id("3")], "content_add").get("content_add.unknown.3")).toEqual([[id("3")]]);
  });

  it("routes locations by the SHA-1 of the path, hashed once, distinct by bytes", () => {
    const path = Buffer.from("src/main.c");
    const digest = createHash("sha1").update(path).digest("hex");
    const out = splitRanges([path, new Uint8Array(path), Buffer.from("other")], "location_add");
    const key = `location_add.unknown.${digest[0]}`;
    expect(out.get(key)?.[0]).toEqual([path]);
    expect([...out.values()].flat()).toHaveLength(2);
  });

  it("flattens relations to distinct [src, dst, path] items routed by the source", () => {
    const rel = new Map([
      [
        id("1"),
        [
          { dst: id("2"), path: Buffer.from("a") },
          { dst: id("2"), path: Buffer.from("a") },
          { dst: id("2"), path: Buffer.from("b") },
        ],
      ],
      [id("f"), [{ dst: id("2"), path: Buffer.from("a") }]],
    ]);
    const out = splitRanges(rel, "relation_add", RelationType.CNT_EARLY_IN_REV);
    expect([...out.keys()]).toEqual([
      "relation_add.content_in_revision.1",
      "relation_add.content_in_revision.f",
    ]);
    expect(out.get("relation_add.content_in_revision.1")).toEqual([
      [id("1"), id("2"), Buffer.from("a")],
      [id("1"), id("2"), Buffer.from("b")],
    ]);
  });

  it("validates like the write methods: all or nothing", () => {
    bad(() =>
      splitRanges([[id("1"), { dst: id("2"), path: null }]], "relation_add", RelationType.REV_IN_ORG),
    );
    bad(() => splitRanges(new Map([[id("1"), 5]]), "relation_add", RelationType.REV_IN_ORG));
    bad(() =>
      splitRanges(
        new Map([[id("1"), [{ dst: id("2"), path: null }]]]),
        "relation_add",
        RelationType.CNT_IN_DIR,
      ),
    );
    bad(() =>
      splitRanges(
        new Map([[id("1"), [{ dst: id("2"), path: Buffer.from("x") }]]]),
        "relation_add",
        RelationType.REV_IN_ORG,
      ),
    );
    bad(() => splitRanges(new Map([[id("1"), 5]]), "content_add"));
    bad(() => splitRanges(new Map([[id("1"), new Date()]]), "content_add"));
    bad(() => splitRanges(new Map([[id("1"), 253402300800000000n]]), "content_add"));
    bad(() => splitRanges(new Map([[id("1"), { date: null, flat: "yes" }]]), "directory_add"));
    bad(() => splitRanges(new Map([[id("1"), 7]]), "origin_add"));
    bad(() => splitRanges(["not a path"], "location_add"));
    bad(() => splitRanges([id("1"), id("G")], "revision_add"));
  });

  it("accepts the extreme timestamps", () => {
    const m = new Map([
      [id("1"), -62135596800000000n],
      [id("2"), 253402300799999999n],
    ]);
    expect([...splitRanges(m, "content_add").values()].flat()).toHaveLength(2);
  });
});

describe("countKeys", () => {
  it("counts a Map write's ids by their first character, and refuses a bad entry before counting", () => {
    const id = (first: string, n: number) => `${first}${n.toString(16).padStart(39, "0")}`;
    const map = new Map<string, bigint>([
      [id("a", 1), 1n],
      [id("0", 1), 2n],
      [id("a", 2), 3n],
    ]);
    expect([...countKeys("contentAdd", map, "content_add")]).toEqual([
      ["a".charCodeAt(0), 2],
      ["0".charCodeAt(0), 1],
    ]);
    map.set("not-a-sha1", 4n);
    expect(() => countKeys("contentAdd", map, "content_add")).toThrow(/contentAdd/);
  });
});
