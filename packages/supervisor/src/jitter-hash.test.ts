import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { jitterHash } from "./jitter-hash.js";

/** The first four bytes of `s`'s MD5 digest by node:crypto, read as jitterHash reads them. */
const md5Head = (s: string) => createHash("md5").update(Buffer.from(s, "utf8")).digest().readInt32LE(0);

describe("jitterHash", () => {
  it("matches the original's values", () => {
    expect(jitterHash("a")).toBe(-1183465204);
    expect(jitterHash("")).toBe(-645128748);
  });

  it("is the first four md5 bytes, little-endian signed, of the UTF-8 bytes", () => {
    for (const s of ["python312Packages.requests", "é", "😀", "x".repeat(1000)]) {
      expect(jitterHash(s)).toBe(md5Head(s));
    }
  });

  it("agrees with node:crypto at every length around the block boundaries, ASCII or not", () => {
    // 55/56 and 119/120 bytes are where the padding needs one more block; a lone surrogate is encoded as U+FFFD
    for (let length = 0; length <= 200; length++) {
      for (const unit of ["p", "é", "😀", "\ud800"]) {
        const s = `pkg.${unit.repeat(length)}`.slice(0, length);
        expect(jitterHash(s), JSON.stringify(s)).toBe(md5Head(s));
      }
    }
  });
});
