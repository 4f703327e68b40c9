import { describe, expect, it } from "vitest";
import { durationMs } from "./duration-option.js";
import { parseOptions } from "./options.js";
import * as v from "./schema/v.js";
import { MAX_DURATION_MS } from "./units.js";

const refusal = (schema: v.Schema<unknown>, value: unknown): string | undefined => {
  try {
    parseOptions(v.strictObject({ waitMs: schema }), { waitMs: value }, "ERR_X_DEMO_INVALID_OPTION");
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

describe("durationMs()", () => {
  it("accepts 0 to the longest timer, fractions included", () => {
    for (const value of [0, 0.5, 1_000, MAX_DURATION_MS])
      expect(refusal(durationMs(), value)).toBeUndefined();
  });

  it("refuses what a timer cannot wait, in the same words everywhere", () => {
    for (const value of [
      MAX_DURATION_MS + 1,
      2 ** 40,
      Number.POSITIVE_INFINITY,
      -1,
      Number.NaN,
      "10",
      null,
    ]) {
      expect(refusal(durationMs(), value)).toMatch(
        /^invalid option waitMs: .* \(expected a duration in ms from 0 to 2147483647 \(about 24\.8 days, the longest timer\)\)$/,
      );
    }
  });

  it("narrows the range on request, never past the longest timer", () => {
    const whole = durationMs({ min: 500, max: 3_600_000, integer: true });
    expect(refusal(whole, 500)).toBeUndefined();
    expect(refusal(whole, 499)).toMatch(/expected a whole number of ms from 500 to 3600000\)/);
    expect(refusal(whole, 600.5)).toMatch(/whole number/);
    expect(refusal(whole, 3_600_001)).toMatch(/3600000/);
    const positive = durationMs({ min: 0, exclusiveMin: true });
    expect(refusal(positive, 0)).toMatch(/expected a duration in ms more than 0 to 2147483647/);
    expect(refusal(positive, 0.1)).toBeUndefined();
    expect(refusal(durationMs({ max: 2 ** 40 }), MAX_DURATION_MS + 1)).toMatch(/longest timer/);
  });

  it("keeps default and optional", () => {
    const schema = v.strictObject({ a: durationMs().default(60_000), b: durationMs().optional() });
    expect(schema.parse({})).toEqual({ a: 60_000 });
  });
});
