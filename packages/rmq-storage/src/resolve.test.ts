import { describe, expect, it } from "vitest";
import { resolveDates, resolveDirectory, resolveRelation, resolveRevision } from "./resolve.js";

const a = "a".repeat(40);
const b = "b".repeat(40);
const o1 = "1".repeat(40);
const o2 = "2".repeat(40);

describe("conflict resolution", () => {
  it("resolveDates keeps the earliest date, keys in first-seen order", () => {
    const items = [
      [b, 5n],
      [a, 9n],
      [b, 3n],
      [a, 10n],
    ] as const;
    const out = resolveDates(items);
    expect([...out]).toEqual([
      [b, 3n],
      [a, 9n],
    ]);
    expect(items[0]).toEqual([b, 5n]);
  });

  it("resolveDirectory keeps the earliest non-null date and ORs flat", () => {
    const first = { date: null, flat: false };
    const out = resolveDirectory([
      [a, first],
      [a, { date: 7n, flat: true }],
      [a, { date: null, flat: false }],
      [a, { date: 9n, flat: false }],
      [b, { date: null, flat: false }],
    ]);
    expect(out.get(a)).toEqual({ date: 7n, flat: true });
    expect(out.get(b)).toEqual({ date: null, flat: false });
    expect(first).toEqual({ date: null, flat: false });
  });

  it("resolveRevision: earliest non-null date, last non-null origin, [id] counts as nulls", () => {
    const out = resolveRevision([
      [a, { date: 8n, origin: o1 }],
      [a],
      [a, { date: 4n, origin: null }],
      [a, { date: null, origin: o2 }],
      [b],
    ]);
    expect([...out]).toEqual([
      [a, { date: 4n, origin: o2 }],
      [b, { date: null, origin: null }],
    ]);
  });

  it("resolveRelation groups by source, distinct by (dst, path bytes)", () => {
    const out = resolveRelation([
      [b, a, Buffer.from("x")],
      [a, b, null],
      [b, a, new Uint8Array(Buffer.from("x"))],
      [b, a, Buffer.from("y")],
      [a, b, null],
    ]);
    expect([...out.keys()]).toEqual([b, a]);
    expect(out.get(b)).toEqual([
      { dst: a, path: Buffer.from("x") },
      { dst: a, path: Buffer.from("y") },
    ]);
    expect(out.get(a)).toEqual([{ dst: b, path: null }]);
  });
});
