import { describe, expect, it } from "vitest";
import { type Cache, MemoryCache } from "./cache.js";
import { XError } from "./x-error.js";

describe("MemoryCache", () => {
  it("answers get/set/has/delete synchronously, undefined for a missing key", () => {
    const cache = new MemoryCache();
    expect(cache.get("missing")).toBeUndefined();
    expect(cache.has("k")).toBe(false);
    cache.set("k", 1);
    expect(cache.get("k")).toBe(1);
    expect(cache.has("k")).toBe(true);
    expect(cache.size).toBe(1);
    expect(cache.delete("k")).toBe(true);
    expect(cache.delete("k")).toBe(false);
    expect(cache.has("k")).toBe(false);
  });

  it("round-trips Date, bigint, Map, Set, typed arrays and nested objects", () => {
    const cache = new MemoryCache();
    const value = {
      when: new Date(1_700_000_000_000),
      big: 2n ** 70n,
      map: new Map([["a", [1, 2]]]),
      set: new Set(["x"]),
      bytes: new Uint8Array([1, 2, 3]),
      nested: { list: [{ deep: null }], missing: undefined },
    };
    cache.set("v", value);
    expect(cache.get("v")).toEqual(value);
  });

  it("isolates stored values from the caller's objects in both directions", () => {
    const cache = new MemoryCache<{ n: number }>();
    const input = { n: 1 };
    cache.set("k", input);
    input.n = 2;
    const output = cache.get("k")!;
    expect(output.n).toBe(1);
    output.n = 3;
    expect(cache.get("k")!.n).toBe(1);
  });

  it("refuses a value it cannot clone and stores nothing", () => {
    const cache = new MemoryCache();
    for (const bad of [() => 1, { nested: Symbol("s") }]) {
      let thrown: unknown;
      try {
        cache.set("bad", bad);
      } catch (error) {
        thrown = error;
      }
      expect(XError.is(thrown, "ERR_X_CACHE_VALUE")).toBe(true);
      expect((thrown as Error).message).toContain('"bad"');
      expect(cache.has("bad")).toBe(false);
    }
  });

  it("lets a subclass throw its own error code", () => {
    class PackageCache extends MemoryCache {
      protected override invalidValue(key: string, cause: unknown): Error {
        return new XError("ERR_X_PKG_CACHE_VALUE", key, { cause });
      }
    }
    expect(() => new PackageCache().set("k", () => 1)).toThrow(
      expect.objectContaining({ code: "ERR_X_PKG_CACHE_VALUE" }),
    );
  });

  it("clears every key", () => {
    const cache = new MemoryCache();
    cache.set("a", 1);
    cache.set("b", 2);
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it("fits the Cache interface, as does an asynchronous store", async () => {
    const store = new Map<string, unknown>();
    const asyncCache: Cache = {
      get: async (key) => store.get(key),
      set: async (key, value) => void store.set(key, value),
      has: async (key) => store.has(key),
      delete: async (key) => store.delete(key),
    };
    const caches: Cache[] = [new MemoryCache(), asyncCache];
    for (const cache of caches) {
      await cache.set("k", "v");
      expect(await cache.get("k")).toBe("v");
      expect(await cache.has("k")).toBe(true);
    }
  });
});
