import { describe, expect, it } from "vitest";
import { parseDuration, parseSize } from "./units.js";

describe("parseSize", () => {
  it("reads bytes, and K/M/G as powers of 1024, case-insensitive, with an optional B or iB", () => {
    expect(parseSize("4096")).toBe(4096);
    expect(parseSize("1k")).toBe(1024);
    expect(parseSize("512M")).toBe(512 * 1024 ** 2);
    expect(parseSize("1.5G")).toBe(1.5 * 1024 ** 3);
    expect(parseSize("100kb")).toBe(100 * 1024);
    expect(parseSize("2MiB")).toBe(2 * 1024 ** 2);
    expect(parseSize("3gib")).toBe(3 * 1024 ** 3);
    expect(parseSize(".5K")).toBe(512);
    expect(parseSize("10B")).toBe(10);
  });

  it.each(["", "-1", "1T", "abc", "1 K K", "1iB", "1e3", "M"])("rejects %j", (text) => {
    expect(() => parseSize(text)).toThrow(expect.objectContaining({ code: "ERR_X_GUARD_OPTIONS" }));
  });
});

describe("parseDuration", () => {
  it("reads seconds with timeout(1)'s s, m, h, d suffixes, fractions allowed", () => {
    expect(parseDuration("10")).toBe(10);
    expect(parseDuration("0.5")).toBe(0.5);
    expect(parseDuration("2s")).toBe(2);
    expect(parseDuration("1.5m")).toBe(90);
    expect(parseDuration("2h")).toBe(7_200);
    expect(parseDuration("1d")).toBe(86_400);
  });

  it.each(["", "-5", "5x", "m", "1 m", "NaN"])("rejects %j", (text) => {
    expect(() => parseDuration(text)).toThrow(expect.objectContaining({ code: "ERR_X_GUARD_OPTIONS" }));
  });
});
