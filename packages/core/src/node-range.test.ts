import { describe, expect, it } from "vitest";
import { nodeSatisfies } from "./node-range.js";

describe("nodeSatisfies", () => {
  it.each([
    [">=22", "22.12.0", true],
    [">=22", "20.20.2", false],
    [">=22.22", "22.21.9", false],
    [">=22.22", "24.0.0", true],
    ["20.x || 22.x || 23.x || 24.x", "24.21.0", true],
    ["20.x || 22.x || 23.x || 24.x", "26.10.0", false],
    ["^22.12.0 || >=24", "22.11.0", false],
    ["^22.12.0 || >=24", "22.23.3", true],
    ["^22.12.0 || >=24", "23.1.0", false],
    ["^22.12.0 || >=24", "26.10.0", true],
  ])("%s with Node %s: %s", (range, version, expected) => {
    expect(nodeSatisfies(range, version)).toBe(expected);
  });

  it("treats a comparator it does not understand as satisfied", () => {
    expect(nodeSatisfies("<25", "26.0.0")).toBe(true);
  });
});
