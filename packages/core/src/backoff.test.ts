import { describe, expect, it } from "vitest";
import { Backoff, type BackoffOptions, backoffDelay } from "./backoff.js";
import { XError } from "./x-error.js";

describe("backoffDelay", () => {
  it("grows by the factor from the initial delay when jitter is off", () => {
    const delays = [0, 1, 2, 3].map((n) => backoffDelay(n, { initialMs: 100, factor: 2, jitter: 0 }));
    expect(delays).toEqual([100, 200, 400, 800]);
  });

  it("never exceeds the cap, jitter included", () => {
    for (let attempt = 0; attempt < 40; attempt++) {
      for (const r of [0, 0.5, 0.999999]) {
        const delay = backoffDelay(attempt, { initialMs: 100, maxMs: 5_000, jitter: 0.2, random: () => r });
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(5_000);
      }
    }
    expect(backoffDelay(1_000, { maxMs: 5_000, jitter: 0 })).toBe(5_000);
  });

  it("spreads by at most ±jitter around the base delay", () => {
    expect(backoffDelay(0, { initialMs: 1_000, jitter: 0.2, random: () => 0 })).toBeCloseTo(800);
    expect(backoffDelay(0, { initialMs: 1_000, jitter: 0.2, random: () => 0.5 })).toBeCloseTo(1_000);
    expect(backoffDelay(0, { initialMs: 1_000, jitter: 0.2, random: () => 0.99999 })).toBeCloseTo(1_200, 0);
    for (let i = 0; i < 1_000; i++) {
      const delay = backoffDelay(2, { initialMs: 100 });
      expect(delay).toBeGreaterThanOrEqual(320);
      expect(delay).toBeLessThanOrEqual(480);
    }
  });

  it("keeps the spread at the cap, below it, rather than piling retries onto the cap", () => {
    const capped = (r: number) =>
      backoffDelay(10, { initialMs: 1_000, maxMs: 1_000, jitter: 0.5, random: () => r });
    expect(capped(0)).toBe(500);
    expect(capped(0.5)).toBe(750);
    expect(capped(0.99)).toBeCloseTo(995);
    const draws = Array.from({ length: 1_000 }, () => backoffDelay(10, { maxMs: 1_000, jitter: 0.5 }));
    expect(draws.filter((delay) => delay === 1_000)).toEqual([]);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(500);
  });

  it("uses the documented defaults: 100 ms, ×2, 5 s cap", () => {
    expect(backoffDelay(0, { jitter: 0 })).toBe(100);
    expect(backoffDelay(3, { jitter: 0 })).toBe(800);
    expect(backoffDelay(10, { jitter: 0 })).toBe(5_000);
  });

  it("draws from [0, delay) with full jitter, under the cap", () => {
    expect(backoffDelay(2, { initialMs: 100, jitter: "full", random: () => 0 })).toBe(0);
    expect(backoffDelay(2, { initialMs: 100, jitter: "full", random: () => 0.5 })).toBe(200);
    expect(backoffDelay(10, { initialMs: 100, maxMs: 800, jitter: "full", random: () => 0.99 })).toBeCloseTo(
      792,
    );
  });
});

describe("Backoff", () => {
  it("counts attempts and starts again after reset", () => {
    const backoff = new Backoff({ initialMs: 10, jitter: 0 });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([10, 20, 40]);
    expect(backoff.attempt).toBe(3);
    backoff.reset();
    expect(backoff.attempt).toBe(0);
    expect(backoff.next()).toBe(10);
  });
});

describe("Backoff and backoffDelay options", () => {
  const refusal = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      expect(XError.is(error, "ERR_X_CORE_INVALID_OPTION")).toBe(true);
      return (error as Error).message;
    }
    throw new Error("accepted");
  };

  it.each([
    [{ initialMs: -1 }, /invalid option initialMs: -1 \(expected a duration in ms from 0 to 2147483647/],
    [{ initialMs: Number.NaN }, /invalid option initialMs: NaN/],
    [{ maxMs: 2 ** 31 }, /invalid option maxMs: 2147483648 .*longest timer/],
    [{ maxMs: Number.POSITIVE_INFINITY }, /invalid option maxMs: Infinity/],
    [{ initalMs: 10 }, /unknown option initalMs: 10; did you mean initialMs\?/],
    [{ jitter: 2 }, /invalid option jitter: 2 \(expected a fraction from 0 to 1, or "full"\)/],
    [{ jitter: -0.1 }, /invalid option jitter/],
    [{ jitter: "half" }, /invalid option jitter/],
    [{ factor: 0.5 }, /invalid option factor: 0.5 \(expected a finite number ≥ 1\)/],
    [{ random: 0.5 }, /invalid option random/],
  ])("refuses %j in both forms", (options, message) => {
    expect(refusal(() => new Backoff(options as BackoffOptions))).toMatch(message);
    expect(refusal(() => backoffDelay(0, options as BackoffOptions))).toMatch(message);
  });

  it.each([Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY])("refuses attempt %s", (attempt) => {
    expect(refusal(() => backoffDelay(attempt))).toMatch(
      /invalid option attempt: .* \(expected an integer ≥ 0\)/,
    );
  });

  it("accepts the bounds: zero delays, the longest timer, jitter 0 and 1", () => {
    expect(backoffDelay(5_000, { initialMs: 0, jitter: 0 })).toBe(0);
    expect(backoffDelay(60, { maxMs: 2 ** 31 - 1, jitter: 0 })).toBe(2 ** 31 - 1);
    expect(backoffDelay(0, { initialMs: 1_000, jitter: 1, random: () => 0.5 })).toBe(1_000);
    expect(new Backoff({ initialMs: 10, factor: 1, jitter: 0 }).next()).toBe(10);
  });
});
