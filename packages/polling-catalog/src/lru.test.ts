import { describe, expect, it } from "vitest";
import { Lru } from "./lru.js";

describe("Lru", () => {
  it("keeps at most maxEntries, dropping the least recently used", () => {
    const lru = new Lru<string, number>({ maxEntries: 2 });
    lru.set("a", 1);
    lru.set("b", 2);
    expect(lru.get("a")).toBe(1);
    lru.set("c", 3);
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe(1);
    expect(lru.size).toBe(2);
  });

  it("keeps at most maxWeight in total, dropping the least recently used", () => {
    const lru = new Lru<string, string>({ maxEntries: 100, maxWeight: 10, weigh: (value) => value.length });
    lru.set("a", "xxxx");
    lru.set("b", "yyyy");
    expect(lru.get("a")).toBe("xxxx");
    lru.set("c", "zzzz"); // 12 > 10: b, the least recently used, goes
    expect(lru.get("b")).toBeUndefined();
    expect([lru.get("a"), lru.get("c")]).toEqual(["xxxx", "zzzz"]);
    expect(lru.weight).toBe(8);
    lru.set("a", "x"); // replacing an entry counts its new weight only
    expect(lru.weight).toBe(5);
  });

  it("does not store a value heavier than maxWeight, and drops the key's previous entry", () => {
    const lru = new Lru<string, string>({ maxEntries: 100, maxWeight: 10, weigh: (value) => value.length });
    lru.set("keep", "kk");
    lru.set("a", "small");
    expect(lru.set("a", "x".repeat(11))).toBe(false);
    expect(lru.get("a")).toBeUndefined();
    expect(lru.get("keep")).toBe("kk");
    expect([lru.size, lru.weight]).toEqual([1, 2]);
    expect(lru.set("b", "x".repeat(10))).toBe(true);
    expect([lru.size, lru.weight]).toEqual([1, 10]);
  });
});
