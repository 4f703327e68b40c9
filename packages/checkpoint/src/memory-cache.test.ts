import { MemoryCache as CoreMemoryCache, XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { at, expectCode } from "../test/helpers.js";
import { MemoryCache } from "./index.js";

describe("MemoryCache", () => {
  it("is core's MemoryCache", () => {
    expect(new MemoryCache()).toBeInstanceOf(CoreMemoryCache);
  });

  it("stores and returns structured clones, so neither side can change what is stored", () => {
    const cache = new MemoryCache();
    const value = {
      when: at(0),
      big: 1n,
      set: new Set([1]),
      map: new Map([["a", { n: 1 }]]),
      bytes: new Uint8Array([1]),
    };
    cache.set("k", value);
    value.set.add(2);
    const read = cache.get("k") as typeof value;
    read.map.get("a")!.n = 99;
    expect(cache.get("k")).toEqual({
      when: at(0),
      big: 1n,
      set: new Set([1]),
      map: new Map([["a", { n: 1 }]]),
      bytes: new Uint8Array([1]),
    });
    expect(cache.get("missing")).toBeUndefined();
    expect(cache.has("k")).toBe(true);
    expect(cache.delete("k")).toBe(true);
    expect(cache.delete("k")).toBe(false);
  });

  it("a value that cannot be cloned throws ERR_X_CHECKPOINT_CACHE_VALUE (not core's code) and stores nothing", async () => {
    const cache = new MemoryCache();
    for (const value of [() => {}, Symbol("s"), { nested: [() => {}] }]) {
      const error = await expectCode(() => cache.set("k", value), "ERR_X_CHECKPOINT_CACHE_VALUE");
      expect(XError.is(error, "ERR_X_CACHE_VALUE")).toBe(false);
      expect(error.message).toContain('"k"');
    }
    expect(cache.has("k")).toBe(false);
  });
});
