import { describe, expectTypeOf, it } from "vitest";
import * as v from "./v.js";

describe("v.Output", () => {
  it("infers objects with optional keys where the output may be undefined", () => {
    const schema = v.strictObject({
      name: v.string(),
      count: v.number().default(1),
      mode: v.enum(["a", "b"]).optional(),
      from: v.union([v.literal("first"), v.strictObject({ seq: v.number() })]),
      tags: v.array(v.string()),
      pair: v.tuple([v.string(), v.boolean().nullable()]),
      env: v.record(v.string(), v.string().optional()),
      signal: v.instanceof(AbortSignal).optional(),
      any: v.unknown().optional(),
    });
    expectTypeOf<v.Output<typeof schema>>().toEqualTypeOf<{
      name: string;
      count: number;
      mode?: "a" | "b" | undefined;
      from: "first" | { seq: number };
      tags: string[];
      pair: [string, boolean | null];
      env: Record<string, string | undefined>;
      signal?: AbortSignal | undefined;
      any?: unknown;
    }>();
  });

  it("follows transform, default and custom", () => {
    const big = v.string().transform((text) => BigInt(text));
    expectTypeOf<v.Output<typeof big>>().toEqualTypeOf<bigint>();
    const fn = v.custom<() => number>((x) => typeof x === "function").default(() => () => 1);
    expectTypeOf<v.Output<typeof fn>>().toEqualTypeOf<() => number>();
    expectTypeOf(v.literal(["x", "y"]).parse).returns.toEqualTypeOf<"x" | "y">();
  });
});
