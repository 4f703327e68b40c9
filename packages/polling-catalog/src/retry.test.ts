import { describe, expect, it } from "vitest";
import { Lru } from "./lru.js";
import { isRetryableStatus, retryDelayMs } from "./retry.js";

describe("retryDelayMs", () => {
  it("waits 100, 200, 400 and 800 ms without Retry-After", () => {
    expect([0, 1, 2, 3].map((retry) => retryDelayMs(retry, null))).toEqual([100, 200, 400, 800]);
  });

  it("uses Retry-After in seconds or as an HTTP date, capped at 60 s", () => {
    const now = Date.parse("2024-01-01T00:00:00Z");
    expect(retryDelayMs(0, "3", now)).toBe(3_000);
    expect(retryDelayMs(0, "3600", now)).toBe(60_000);
    expect(retryDelayMs(0, "Mon, 01 Jan 2024 00:00:05 GMT", now)).toBe(5_000);
    expect(retryDelayMs(0, "Sun, 31 Dec 2023 00:00:05 GMT", now)).toBe(0);
    expect(retryDelayMs(1, "soon", now)).toBe(200);
  });

  it("retries 502, 503 and 504 only", () => {
    expect([500, 501, 502, 503, 504, 505, 429].filter(isRetryableStatus)).toEqual([502, 503, 504]);
  });
});

describe("Lru", () => {
  it("keeps at most its capacity, dropping the least recently used", () => {
    const lru = new Lru<string, number>(2);
    lru.set("a", 1);
    lru.set("b", 2);
    expect(lru.get("a")).toBe(1);
    lru.set("c", 3);
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe(1);
    expect(lru.size).toBe(2);
  });
});
