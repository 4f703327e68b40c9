import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { jitterHash } from "./jitter-hash.js";

describe("jitterHash", () => {
  it("matches the original's values", () => {
    expect(jitterHash("a")).toBe(-1183465204);
    expect(jitterHash("")).toBe(-645128748);
  });

  it("is the first four md5 bytes, little-endian signed, of the UTF-8 bytes", () => {
    for (const s of ["python312Packages.requests", "é", "😀", "x".repeat(1000)]) {
      expect(jitterHash(s)).toBe(createHash("md5").update(Buffer.from(s, "utf8")).digest().readInt32LE(0));
    }
  });
});
