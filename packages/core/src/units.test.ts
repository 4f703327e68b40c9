import { describe, expect, it } from "vitest";
import { parseDurationMs, parseSizeBytes } from "./units.js";

describe("parseDurationMs", () => {
  it.each([
    ["10", 10_000],
    ["0.5", 500],
    [".25s", 250],
    ["2m", 120_000],
    ["1.5h", 5_400_000],
    ["1d", 86_400_000],
    [" 3 ", 3_000],
  ])("%s is %d ms", (text, ms) => {
    expect(parseDurationMs("--timeout", text)).toBe(ms);
  });

  it.each(["", "abc", "-1", "10x", "1e3", "1 m", "5ms"])(
    "refuses %j with ERR_X_USAGE naming the flag",
    (text) => {
      expect(() => parseDurationMs("--timeout", text)).toThrow(
        expect.objectContaining({ code: "ERR_X_USAGE", message: expect.stringContaining("--timeout") }),
      );
    },
  );
});

describe("parseSizeBytes", () => {
  it.each([
    ["4096", 4096],
    ["100b", 100],
    ["1k", 1024],
    ["100kb", 102_400],
    ["512M", 512 * 1024 ** 2],
    ["1.5GiB", 1.5 * 1024 ** 3],
    ["0.5k", 512],
    ["1.3", 1],
  ])("%s is %d bytes", (text, bytes) => {
    expect(parseSizeBytes("--max-memory", text)).toBe(bytes);
  });

  it.each(["", "M", "-1k", "1T", "12 M", "1e6"])("refuses %j with ERR_X_USAGE naming the flag", (text) => {
    expect(() => parseSizeBytes("--max-memory", text)).toThrow(
      expect.objectContaining({ code: "ERR_X_USAGE", message: expect.stringContaining("--max-memory") }),
    );
  });
});
