import { describe, expect, it } from "vitest";
import type { Issue } from "./issue.js";
import * as v from "./v.js";

/** The first issue of validating `value`, or `undefined` when it is valid. */
function firstIssue(schema: v.Schema<unknown>, value: unknown): Pick<Issue, "path" | "message"> | undefined {
  const result = schema.safeParse(value);
  if (result.success) return undefined;
  const [issue] = result.error.issues;
  return issue && { path: issue.path, message: issue.message };
}

describe("v: kinds of values", () => {
  it("numbers are finite; rules report their own message, else the schema's, else a generic one", () => {
    const n = v.number({ error: "N" }).int().min(1).max(9, { error: "at most 9" });
    expect(n.parse(3)).toBe(3);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, "3", 0, 1.5])
      expect(firstIssue(n, bad)?.message).toBe("N");
    expect(firstIssue(n, 10)?.message).toBe("at most 9");
    expect(firstIssue(v.number(), "x")?.message).toBe("Invalid input: expected number, received string");
    expect(firstIssue(v.number().gt(0), 0)?.message).toBe("Too small: expected number to be >0");
    expect(firstIssue(v.number().nonnegative(), -1)?.message).toBe("Too small: expected number to be >=0");
  });

  it("strings: min, max and regex", () => {
    const s = v.string().min(2).max(3).regex(/^a/g);
    expect(s.parse("ab")).toBe("ab");
    expect(s.parse("ab")).toBe("ab"); // a global pattern does not carry lastIndex over
    expect(firstIssue(s, "a")?.message).toBe("Too small: expected string to have >=2 characters");
    expect(firstIssue(s, "abcd")?.message).toBe("Too big: expected string to have <=3 characters");
    expect(firstIssue(s, "bb")?.message).toBe("Invalid string: must match pattern /^a/g");
  });

  it("booleans, literals, enums, dates, custom tests, instances and undefined", () => {
    expect(v.boolean().parse(false)).toBe(false);
    expect(firstIssue(v.boolean({ error: "true or false" }), 0)?.message).toBe("true or false");
    expect(v.literal(["first", "next"]).parse("next")).toBe("next");
    expect(firstIssue(v.literal(1), 2)?.message).toBe("Invalid input: expected 1");
    expect(firstIssue(v.enum(["a", "b"]), "c")?.message).toBe('Invalid option: expected one of "a"|"b"');
    expect(firstIssue(v.date(), new Date(Number.NaN))).toBeDefined();
    expect(v.custom<() => void>((x) => typeof x === "function").safeParse(() => {}).success).toBe(true);
    expect(
      firstIssue(
        v.custom(() => false),
        1,
      )?.message,
    ).toBe("Invalid input");
    expect(firstIssue(v.instanceof(AbortSignal, { error: "an AbortSignal" }), {})?.message).toBe(
      "an AbortSignal",
    );
    expect(firstIssue(v.undefined({ error: "nothing" }).optional(), 1)?.message).toBe("nothing");
    expect(v.unknown().parse(Symbol.iterator)).toBe(Symbol.iterator);
  });
});

describe("v: containers", () => {
  it("a strict object reports its keys' issues first, by path, then unknown keys", () => {
    const o = v.strictObject({
      a: v.number({ error: "A" }),
      b: v.strictObject({ c: v.string().optional() }),
    });
    expect(o.parse({ a: 1, b: {} })).toEqual({ a: 1, b: {} });
    expect(firstIssue(o, { a: "x", z: 1, b: {} })).toEqual({ path: ["a"], message: "A" });
    const unknown = o.safeParse({ a: 1, b: { c: "x", d: 2 } });
    expect(unknown.success || unknown.error.issues[0]).toMatchObject({
      path: ["b", "d"],
      code: "unknown_key",
    });
    expect(firstIssue(o, [])?.message).toBe("Invalid input: expected object, received array");
  });

  it("a plain object drops unknown keys; absent optional keys stay absent", () => {
    const o = v.object({ a: v.number().optional(), b: v.number().default(2) });
    expect(o.parse({ x: 1 })).toStrictEqual({ b: 2 });
    expect(o.strict().safeParse({ x: 1 }).success).toBe(false);
  });

  it("arrays check their items first, then their length; tuples their length, then their items", () => {
    const a = v.array(v.string({ error: "S" })).min(1, { error: "one or more" });
    expect(firstIssue(a, [])?.message).toBe("one or more");
    expect(firstIssue(a, ["x", 2])).toEqual({ path: [1], message: "S" });
    const t = v.tuple([v.string(), v.number().nullable()]);
    expect(t.parse(["a", null])).toEqual(["a", null]);
    expect(firstIssue(t, ["a"])?.message).toBe("Too small: expected array to have >=2 items");
    expect(firstIssue(t, ["a", "b"])?.path).toEqual([1]);
  });

  it("records check every key and value, reported at the key", () => {
    const r = v.record(v.string().regex(/^[a-z]+$/, { error: "a lowercase name" }), v.number(), {
      error: "R",
    });
    expect(r.parse({ a: 1 })).toEqual({ a: 1 });
    expect(firstIssue(r, { A: 1 })).toEqual({ path: ["A"], message: "a lowercase name" });
    expect(firstIssue(r, { a: "1" })?.path).toEqual(["a"]);
    expect(firstIssue(r, 5)?.message).toBe("R");
    const parsed = v.record(v.string(), v.number()).parse(JSON.parse('{"__proto__":1}'));
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(["__proto__"]);
  });

  it("a union reports its one near-miss option, else its own message", () => {
    const u = v.union([v.string().min(1, { error: "non-empty" }), v.number().int().nonnegative()], {
      error: "U",
    });
    expect(u.parse("x")).toBe("x");
    expect(u.parse(3)).toBe(3);
    expect(firstIssue(u, "")?.message).toBe("non-empty");
    expect(firstIssue(u, -1)?.message).toBe("Too small: expected number to be >=0");
    expect(firstIssue(u, 1.5)?.message).toBe("U"); // a fraction is no integer at all
    expect(firstIssue(u, null)?.message).toBe("U");
    expect(firstIssue(v.union([v.string(), v.number()]), null)?.message).toBe("Invalid input");
  });
});

describe("v: modifiers", () => {
  it("optional, nullable, default (called each time when a function) and catch", () => {
    expect(v.number().optional().parse(undefined)).toBeUndefined();
    expect(v.number().nullable().parse(null)).toBeNull();
    const fresh = v.array(v.number()).default(() => []);
    expect(fresh.parse(undefined)).not.toBe(fresh.parse(undefined));
    expect(v.number().default(5).parse(undefined)).toBe(5);
    expect(v.number().catch(0).parse("x")).toBe(0);
    expect(v.strictObject({ a: v.number().catch(0) }).parse({ a: "x" })).toEqual({ a: 0 });
  });

  it("refine blames a path when told, transform maps the output, preprocess maps the input", () => {
    const o = v
      .strictObject({ min: v.number(), max: v.number() })
      .refine((x) => x.min <= x.max, { error: "≥ min", path: ["max"] })
      .transform((x) => x.max - x.min);
    expect(o.parse({ min: 1, max: 3 })).toBe(2);
    expect(firstIssue(o, { min: 3, max: 1 })).toEqual({ path: ["max"], message: "≥ min" });
    const list = v.preprocess((x) => (typeof x === "string" ? x.split(",") : x), v.array(v.string()));
    expect(list.parse("a,b")).toEqual(["a", "b"]);
  });

  it("parse throws a SchemaError holding every issue", () => {
    const o = v.strictObject({ a: v.number(), b: v.string() });
    expect(() => o.parse({})).toThrow(v.SchemaError);
    try {
      o.parse({ c: 1 });
    } catch (error) {
      expect((error as v.SchemaError).issues.map((issue) => issue.path.join("."))).toEqual(["a", "b", "c"]);
      expect((error as Error).message).toBe("invalid a: Invalid input: expected number, received undefined");
    }
  });
});
