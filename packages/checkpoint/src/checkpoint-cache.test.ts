import { describe, expect, it } from "vitest";
import { AsyncCache, at, deferred, expectCode, RecordingCache, recordingDependent } from "../test/helpers.js";
import { Checkpoint, Dependency, MemoryCache } from "./index.js";

describe("Checkpoint and its cache", () => {
  it("uses Slipstream's key layout plus the is-down key, and no other key", async () => {
    const cache = new RecordingCache();
    const cp = new Checkpoint("test", { dependencies: [new Dependency("dep")], cache });
    expect(cache.reads).toEqual([
      "__test__state",
      "__test__state_marker",
      "__test_dep_checkpoint_state",
      "__test_dep_checkpoint_marker",
      "__test_dep_checkpoint_is_down",
    ]);
    await cp.checkPulse(at(0), { offset: 1 });
    expect(cache.writes).toEqual([
      "__test__state",
      "__test__state_marker",
      "__test_dep_checkpoint_state",
      "__test_dep_checkpoint_marker",
    ]);
    await cp.checkPulse(at(11), { offset: 2 });
    await cp.heartbeat(at(12));
    expect(Object.keys(cache.dump()).sort()).toEqual([
      "__test__state",
      "__test__state_marker",
      "__test_dep_checkpoint_is_down",
      "__test_dep_checkpoint_marker",
      "__test_dep_checkpoint_state",
    ]);
    expect(cache.dump()).toEqual({
      __test__state: { offset: 2 },
      __test__state_marker: at(11),
      __test_dep_checkpoint_state: { offset: 2 },
      __test_dep_checkpoint_marker: at(12),
      __test_dep_checkpoint_is_down: false,
    });
  });

  it.each([
    ["pfx", "pfx_test__state"],
    ["", "_test__state"],
  ])("prefix %j gives %s", async (cacheKeyPrefix, key) => {
    const cache = new RecordingCache();
    const cp = new Checkpoint("test", { dependencies: [new Dependency("dep")], cache, cacheKeyPrefix });
    await cp.checkPulse(at(0));
    expect(cache.writes[0]).toBe(key);
    expect(cache.writes[2]).toBe(`${cacheKeyPrefix}_test_dep_checkpoint_state`);
  });

  it("writes the checkpoint state key, then the marker key, on a heartbeat", async () => {
    const cache = new RecordingCache();
    const cp = new Checkpoint("c", { dependencies: [new Dependency("d")], cache });
    await cp.heartbeat(at(0));
    expect(cache.writes).toEqual(["__c_d_checkpoint_state", "__c_d_checkpoint_marker"]);
  });

  it("loads state, marker, checkpoints and is-down at construction; null reads as missing", () => {
    const cache = new MemoryCache();
    cache.set("__c__state", { offset: 7n, seen: new Set([1]) });
    cache.set("__c__state_marker", at(5));
    cache.set("__c_a_checkpoint_state", { offset: 6n });
    cache.set("__c_a_checkpoint_marker", at(4));
    cache.set("__c_b_checkpoint_state", null);
    cache.set("__c_b_checkpoint_marker", null);
    cache.set("__c_b_checkpoint_is_down", null);
    const [a, b] = [new Dependency("a"), new Dependency("b")];
    const cp = new Checkpoint("c", { dependencies: [a, b], cache });
    expect(cp.state).toEqual({ offset: 7n, seen: new Set([1]) });
    expect(cp.stateMarker).toEqual(at(5));
    expect(a.toJSON()).toEqual({ checkpointState: { offset: 6n }, checkpointMarker: at(4) });
    expect(b.toJSON()).toEqual({ checkpointState: undefined, checkpointMarker: undefined });
    expect([a.isDown, b.isDown]).toEqual([false, false]);

    const empty = new MemoryCache();
    empty.set("__c__state", null);
    expect(new Checkpoint("c", { dependencies: [new Dependency("x")], cache: empty }).state).toEqual({});
  });

  it("a stored state that is not a plain object is ERR_X_CHECKPOINT_STATE_TYPE naming the key", async () => {
    for (const stored of [[1, 2], "text", 5, new Map()]) {
      const cache = new MemoryCache();
      cache.set("__c__state", stored);
      const error = await expectCode(
        () => new Checkpoint("c", { dependencies: [new Dependency("d")], cache }),
        "ERR_X_CHECKPOINT_STATE_TYPE",
      );
      expect(error.message).toContain('"__c__state"');
    }
  });

  it("a stored is-down value that is not a boolean is ERR_X_CHECKPOINT_CORRUPT naming the key", async () => {
    const cache = new MemoryCache();
    cache.set("__c_d_checkpoint_is_down", "yes");
    const error = await expectCode(
      () => new Checkpoint("c", { dependencies: [new Dependency("d")], cache }),
      "ERR_X_CHECKPOINT_CORRUPT",
    );
    expect(error.message).toContain('"__c_d_checkpoint_is_down"');
  });

  it("does not validate loaded markers: the checks do when they run", async () => {
    const cache = new MemoryCache();
    cache.set("__c_d_checkpoint_marker", "not a date");
    const dep = new Dependency("d");
    const cp = new Checkpoint("c", { dependencies: [dep], cache });
    expect(dep.checkpointMarker).toBe("not a date");
    const error = await expectCode(() => cp.checkPulse(at(0)), "ERR_X_CHECKPOINT_MARKER_TYPE");
    expect(error.message).toContain('"not a date"');
    expect(cp.stateMarker).toEqual(at(0));
  });

  it("a restart during a downtime pauses the dependent once, with no callback and no event", async () => {
    const cache = new MemoryCache();
    const first = new Checkpoint("c", { dependencies: [new Dependency("d")], cache });
    await first.checkPulse(at(0), { offset: 1 });
    await first.checkPulse(at(11), { offset: 2 });

    const dependent = recordingDependent();
    const calls: string[] = [];
    const dep = new Dependency("d");
    const cp = new Checkpoint("c", {
      dependent,
      dependencies: [dep],
      cache,
      downtimeCallback: () => calls.push("downtime"),
    });
    cp.on("down", () => calls.push("down event"));
    expect(dependent.log).toEqual(["pause"]);
    expect(dep.isDown).toBe(true);
    expect(await cp.checkPulse(at(12), { offset: 3 })).toBe(12 * 60_000);
    expect(calls).toEqual([]);
    expect(dependent.log).toEqual(["pause"]);
    expect(await cp.heartbeat(at(13))).toMatchObject({ isLate: false });
    expect(dependent.log).toEqual(["pause", "resume"]);
  });

  it("a rejected pause at load makes the next call reject with its reason, once", async () => {
    const cache = new MemoryCache();
    cache.set("__c_d_checkpoint_is_down", true);
    const failure = new Error("consumer not running");
    const dependent = { pause: () => Promise.reject(failure), resume: () => {} };
    const cp = new Checkpoint("c", { dependent, dependencies: [new Dependency("d")], cache });
    await expect(cp.checkPulse(at(0))).rejects.toBe(failure);
    expect(cp.stateMarker).toBeUndefined();
    expect(await cp.checkPulse(at(0))).toBe(true);
  });

  it("a synchronous cache error rejects the call with that same error", async () => {
    const failure = new Error("disk full");
    const cache = {
      get: () => undefined,
      set: () => {
        throw failure;
      },
    };
    const cp = new Checkpoint("c", { dependencies: [new Dependency("d")], cache });
    await expect(cp.checkPulse(at(0))).rejects.toBe(failure);
    await expect(cp.heartbeat(at(0))).rejects.toBe(failure);
  });

  describe("asynchronous caches", () => {
    it("the constructor throws ERR_X_CHECKPOINT_ASYNC_CACHE pointing to open, leaving no unhandled rejection", async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on("unhandledRejection", onUnhandled);
      try {
        const cache = { get: () => Promise.reject(new Error("offline")), set: () => {} };
        const error = await expectCode(
          () => new Checkpoint("c", { dependencies: [new Dependency("d")], cache }),
          "ERR_X_CHECKPOINT_ASYNC_CACHE",
        );
        expect(error.message).toContain("Checkpoint.open");
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(unhandled).toEqual([]);
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
    });

    it("open awaits every read, and each write is awaited before the next step", async () => {
      const cache = new AsyncCache();
      cache.inner.set("__c__state", { offset: 1 });
      cache.inner.set("__c__state_marker", at(0));
      cache.inner.set("__c_d_checkpoint_marker", at(0));
      const cp = await Checkpoint.open("c", { dependencies: [new Dependency("d")], cache });
      expect(cp.state).toEqual({ offset: 1 });
      expect(cp.dependency("d").checkpointMarker).toEqual(at(0));
      await cp.checkPulse(at(11), { offset: 2 });
      expect(cache.log).toEqual([
        "set __c__state",
        "stored __c__state",
        "set __c__state_marker",
        "stored __c__state_marker",
        "set __c_d_checkpoint_is_down",
        "stored __c_d_checkpoint_is_down",
      ]);
      const reopened = await Checkpoint.open("c", { dependencies: [new Dependency("d")], cache });
      expect(reopened.dependency("d").isDown).toBe(true);
    });

    it("open works with a synchronous cache and awaits the pause of a restart during a downtime", async () => {
      const cache = new MemoryCache();
      cache.set("__c_d_checkpoint_is_down", true);
      const paused = deferred();
      const events: string[] = [];
      const dependent = {
        pause: async () => {
          await paused.promise;
          events.push("paused");
        },
        resume: () => {},
      };
      const opening = Checkpoint.open("c", { dependent, dependencies: [new Dependency("d")], cache }).then(
        () => events.push("opened"),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(events).toEqual([]);
      paused.resolve();
      await opening;
      expect(events).toEqual(["paused", "opened"]);
    });

    it("an asynchronous cache error rejects with that same error", async () => {
      const failure = new Error("timeout");
      const cache = { get: async () => undefined, set: async () => Promise.reject(failure) };
      const cp = await Checkpoint.open("c", { dependencies: [new Dependency("d")], cache });
      await expect(cp.checkPulse(at(0))).rejects.toBe(failure);
      const readFailure = new Error("read failed");
      await expect(
        Checkpoint.open("c", {
          dependencies: [new Dependency("d")],
          cache: { get: async () => Promise.reject(readFailure), set() {} },
        }),
      ).rejects.toBe(readFailure);
    });
  });
});
