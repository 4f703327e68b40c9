import { describe, expect, it } from "vitest";
import { formatRanges, parseRanges } from "./ranges.js";

describe("parseRanges and formatRanges", () => {
  it("reads digits and ascending spans, case-insensitive, into distinct ascending digits", () => {
    expect(parseRanges("0-7")).toEqual([..."01234567"]);
    expect(parseRanges("8-F")).toEqual([..."89abcdef"]);
    expect(parseRanges("c, 0,3,a-c")).toEqual(["0", "3", "a", "b", "c"]);
    expect(parseRanges("5")).toEqual(["5"]);
  });

  it("refuses anything else", () => {
    for (const spec of ["", "7-0", "0-g", "x", "0-", "-1", "0,,1", "01", "0-1-2"])
      expect(parseRanges(spec), spec).toBeUndefined();
  });

  it("writes the shortest spans, and reads back what it writes", () => {
    expect(formatRanges([..."0123456789abcdef"])).toBe("0-f");
    expect(formatRanges(["c", "0", "1", "2", "3", "a"])).toBe("0-3,a,c");
    for (const list of [["7"], [..."89abcdef"], ["0", "2", "4", "5"]])
      expect(parseRanges(formatRanges(list))).toEqual(list);
  });
});
