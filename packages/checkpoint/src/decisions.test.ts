// One test (or group) per row of the README's "Differences from the original (Slipstream)" table.

import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it } from "vitest";
import { AsyncCache, at, deferred, expectCode, RecordingCache, recordingDependent } from "../test/helpers.js";
import { Checkpoint, Dependency, MemoryCache, pausable } from "./index.js";

/** A dependency whose downtime check returns the next of `results` (custom checks accept any marker). */
function scripted(name: string, results: unknown[], recovered: () => boolean = () => true): Dependency {
  return new Dependency(name, { downtimeCheck: () => results.shift(), recoveryCheck: recovered });
}

describe("Difference 1 from Slipstream: checkPulse returns the largest downtime", () => {
  it("returns the largest among the down dependencies, not the last one's result", async () => {
    const cp = new Checkpoint("c", {
      dependencies: [scripted("a", [5_000]), scripted("b", [90_000]), scripted("c", [20_000])],
    });
    expect(await cp.checkPulse(1)).toBe(90_000);
  });

  it("is never undefined while a dependency is down: it falls back to the episode's last truthy result", async () => {
    const cp = new Checkpoint("c", {
      dependencies: [scripted("a", [7_000, undefined, 3_000]), scripted("b", [])],
    });
    expect(await cp.checkPulse(1)).toBe(7_000);
    expect(await cp.checkPulse(2)).toBe(7_000);
    expect(await cp.checkPulse(3)).toBe(3_000);
    await cp.heartbeat(4, "a");
    expect(await cp.checkPulse(5)).toBeUndefined();
  });

  it("an episode loaded from the cache, with no truthy check since, counts as true", async () => {
    const cache = new MemoryCache();
    cache.set("__c_a_checkpoint_is_down", true);
    const cp = new Checkpoint("c", { dependencies: [scripted("a", []), scripted("b", [])], cache });
    expect(await cp.checkPulse(1)).toBe(true);
  });

  it("compares numbers and bigints with >, and otherwise returns the first value in dependency order", async () => {
    const mixed = new Checkpoint("m", {
      dependencies: [scripted("a", ["late"]), scripted("b", [10n]), scripted("c", [9.5])],
    });
    expect(await mixed.checkPulse(1)).toBe(10n);
    const symbolic = new Checkpoint("s", {
      dependencies: [scripted("a", ["first"]), scripted("b", [{ x: 1 }])],
    });
    expect(await symbolic.checkPulse(1)).toBe("first");
  });
});

describe("Difference 2 from Slipstream: only undefined and null mean no marker yet", () => {
  it.each([0, "", false])(
    "the marker %j is kept by the next pulse and compared by custom checks",
    async (marker) => {
      const seen: unknown[] = [];
      const dep = new Dependency("d", {
        downtimeCheck: (_cp, d) => {
          seen.push(d.checkpointMarker);
          return false;
        },
        recoveryCheck: () => true,
      });
      const cp = new Checkpoint("c", { dependencies: [dep] });
      await cp.heartbeat(marker);
      await cp.checkPulse(100, { offset: 1 });
      expect(dep.checkpointMarker).toBe(marker);
      expect(dep.checkpointState).toEqual({});
      expect(seen).toEqual([marker]);
    },
  );

  it("a falsy marker loaded from the cache is not re-initialised either", async () => {
    const cache = new MemoryCache();
    cache.set("__c_d_checkpoint_marker", 0);
    const dep = new Dependency("d", { downtimeCheck: () => false, recoveryCheck: () => true });
    const cp = new Checkpoint("c", { dependencies: [dep], cache });
    await cp.checkPulse(50);
    expect(dep.checkpointMarker).toBe(0);
  });
});

describe("Difference 3 from Slipstream: a dependency's checkpoint state is a snapshot", () => {
  it("no later change to cp.state, or to objects passed in a state, shows in it", async () => {
    const offsets = { p0: 1 };
    const dep = new Dependency("d");
    const cp = new Checkpoint("c", { dependencies: [dep] });
    await cp.checkPulse(at(0), { offsets });
    offsets.p0 = 2;
    (cp.state.offsets as { p0: number }).p0 = 3;
    expect(dep.checkpointState).toEqual({ offsets: { p0: 1 } });
    await cp.heartbeat(at(1));
    const atHeartbeat = dep.checkpointState;
    await cp.checkPulse(at(2), { offsets: { p0: 4 } });
    expect(atHeartbeat).toEqual({ offsets: { p0: 3 } });
    expect(dep.checkpointState).toBe(atHeartbeat);
  });

  it("holds whatever the cache does, even a cache that keeps references", async () => {
    const store = new Map<string, unknown>();
    const cache = {
      get: (key: string) => store.get(key),
      set: (key: string, value: unknown) => void store.set(key, value),
    };
    const offsets = { p0: 1 };
    const a = new Dependency("a");
    const b = new Dependency("b");
    const cp = new Checkpoint("c", { dependencies: [a, b], cache });
    await cp.checkPulse(at(0), { offsets });
    offsets.p0 = 2;
    expect(store.get("__c_a_checkpoint_state")).toEqual({ offsets: { p0: 1 } });
    expect(a.checkpointState).not.toBe(cp.state);
    expect(a.checkpointState).not.toBe(b.checkpointState);
    expect(store.get("__c_a_checkpoint_state")).not.toBe(store.get("__c__state"));
  });
});

describe("Difference 4 from Slipstream: isDown is persisted", () => {
  it("writes true when a downtime starts and false when it ends, only on those transitions", async () => {
    const cache = new RecordingCache();
    const cp = new Checkpoint("c", { dependencies: [new Dependency("d")], cache });
    await cp.checkPulse(at(0));
    await cp.heartbeat(at(1));
    expect(cache.writes).not.toContain("__c_d_checkpoint_is_down");
    await cp.checkPulse(at(12));
    await cp.checkPulse(at(13));
    await cp.heartbeat(at(2));
    expect(cache.get("__c_d_checkpoint_is_down")).toBe(true);
    await cp.heartbeat(at(14));
    await cp.heartbeat(at(15));
    const isDownWrites = cache.writes.filter((key) => key === "__c_d_checkpoint_is_down");
    expect(isDownWrites).toHaveLength(2);
    expect(cache.get("__c_d_checkpoint_is_down")).toBe(false);
  });

  it("a restart while a dependency is down pauses the dependent before the first message is processed", async () => {
    const cache = new MemoryCache();
    const before = new Checkpoint("c", { dependencies: [new Dependency("d")], cache });
    await before.checkPulse(at(0), { offset: 0 });
    await before.checkPulse(at(11), { offset: 1 });

    let pulled = 0;
    async function* messages() {
      for (let offset = 2; offset < 5; offset++) {
        pulled++;
        yield { offset, time: at(10 + offset) };
      }
    }
    const dependent = pausable(messages());
    const cp = new Checkpoint("c", { dependent, dependencies: [new Dependency("d")], cache });
    expect(dependent.paused).toBe(true);
    const first = dependent.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pulled).toBe(0);
    await cp.heartbeat(at(20));
    expect(dependent.paused).toBe(false);
    expect(await first).toEqual({ done: false, value: { offset: 2, time: at(12) } });
  });
});

describe("Difference 5 from Slipstream: downtime handling is edge-triggered", () => {
  it("callback, pause and down event fire once per episode; a later downtime is a new episode", async () => {
    const dependent = recordingDependent();
    const log = dependent.log;
    const cp = new Checkpoint("c", {
      dependent,
      dependencies: [new Dependency("d")],
      downtimeCallback: () => log.push("downtime"),
      recoveryCallback: () => log.push("recovery"),
    });
    cp.on("down", () => log.push("down")).on("up", () => log.push("up"));
    await cp.checkPulse(at(0));
    for (let minute = 11; minute < 15; minute++) await cp.checkPulse(at(minute));
    await cp.heartbeat(at(5));
    await cp.heartbeat(at(15));
    expect(log).toEqual(["pause", "down", "downtime", "up", "recovery", "resume"]);
    await cp.checkPulse(at(30));
    await cp.checkPulse(at(31));
    expect(log.slice(6)).toEqual(["pause", "down", "downtime"]);
  });

  it("with several dependencies, recovery callback and resume fire once, when the last one recovers", async () => {
    const dependent = recordingDependent();
    const recovered: string[] = [];
    const cp = new Checkpoint("c", {
      dependent,
      dependencies: [new Dependency("weather", { downtimeThresholdMs: 3_600_000 }), new Dependency("prices")],
      recoveryCallback: (_cp, dep) => recovered.push(dep.name),
    });
    cp.on("up", (dep) => dependent.log.push(`up ${dep.name}`));
    await cp.checkPulse(at(0));
    await cp.checkPulse(at(11));
    expect(cp.dependency("prices").isDown).toBe(true);
    expect(cp.dependency("weather").isDown).toBe(false);
    expect(await cp.checkPulse(at(70))).toBe(70 * 60_000);
    expect(dependent.log).toEqual(["pause", "pause"]);
    expect(await cp.heartbeat(at(71), "prices")).toMatchObject({ isLate: false });
    expect(recovered).toEqual([]);
    expect(await cp.heartbeat(at(71), "weather")).toMatchObject({ isLate: false });
    expect(recovered).toEqual(["weather"]);
    expect(dependent.log).toEqual(["pause", "pause", "up prices", "up weather", "resume"]);
  });

  it("a throwing downtime callback leaves the dependency down, persisted and paused, and is not retried", async () => {
    const failure = new Error("alerting is down");
    let calls = 0;
    const cache = new MemoryCache();
    const dependent = recordingDependent();
    const dep = new Dependency("d");
    const cp = new Checkpoint("c", {
      dependent,
      cache,
      dependencies: [dep],
      downtimeCallback: (_cp, d) => {
        calls++;
        expect(d.isDown).toBe(true);
        throw failure;
      },
    });
    await cp.checkPulse(at(0));
    await expect(cp.checkPulse(at(11))).rejects.toBe(failure);
    expect(dep.isDown).toBe(true);
    expect(cache.get("__c_d_checkpoint_is_down")).toBe(true);
    expect(await cp.checkPulse(at(12))).toBe(12 * 60_000);
    expect(calls).toBe(1);
    expect(dependent.log).toEqual(["pause"]);
  });
});

describe("Difference 6 from Slipstream: bad input is validated before anything is written", () => {
  it("every rejected call leaves state, marker, dependencies and cache as they were", async () => {
    const cache = new RecordingCache();
    const cp = new Checkpoint("c", { dependencies: [new Dependency("a"), new Dependency("b")], cache });
    await cp.checkPulse(at(0), { offset: 1 });
    const before = { json: structuredClone(cp.toJSON()), writes: cache.writes.length, state: cp.state };
    await expectCode(() => cp.checkPulse(5, { offset: 2 }), "ERR_X_CHECKPOINT_MARKER_TYPE");
    await expectCode(() => cp.checkPulse(null, { offset: 2 }), "ERR_X_CHECKPOINT_MARKER_TYPE");
    await expectCode(() => cp.checkPulse(at(1), [] as never), "ERR_X_CHECKPOINT_STATE_TYPE");
    await expectCode(() => cp.checkPulse(at(1), { offset: 2, bad: () => {} }), "ERR_X_CHECKPOINT_STATE_TYPE");
    await expectCode(() => cp.heartbeat(at(1)), "ERR_X_CHECKPOINT_DEPENDENCY_REQUIRED");
    await expectCode(() => cp.heartbeat(at(1), "c"), "ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY");
    await expectCode(() => cp.heartbeat(at(1), ""), "ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY");
    await expectCode(() => cp.heartbeat("10:00", "a"), "ERR_X_CHECKPOINT_MARKER_TYPE");
    expect(cp.toJSON()).toEqual(before.json);
    expect(cp.state).toBe(before.state);
    expect(cache.writes).toHaveLength(before.writes);
    expect(cp.dependency("a").isDown).toBe(false);
  });

  it("duplicate dependency names are rejected, where Slipstream kept the last one", async () => {
    await expectCode(
      () => new Checkpoint("c", { dependencies: [new Dependency("a"), new Dependency("a")] }),
      "ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY",
    );
  });
});

describe("Difference 7 from Slipstream: durations are milliseconds", () => {
  it("downtimeThresholdMs and the default check's downtime are numbers of ms", async () => {
    const cp = new Checkpoint("c", { dependencies: [new Dependency("d", { downtimeThresholdMs: 1_500 })] });
    await cp.checkPulse(new Date(0));
    expect(await cp.checkPulse(new Date(1_500))).toBeUndefined();
    expect(await cp.checkPulse(new Date(1_501))).toBe(1_501);
  });
});

describe("Difference 8 from Slipstream: the checkpoint pauses exactly its dependent, which then pulls nothing", () => {
  it("a pausable() dependent stops pulling at the downtime and continues at the recovery", async () => {
    let pulled = 0;
    async function* events() {
      for (let minute = 0; minute < 40; minute += 10) {
        pulled++;
        yield at(minute);
      }
    }
    const dependent = pausable(events());
    const bystander = pausable(events());
    const cp = new Checkpoint("c", { dependent, dependencies: [new Dependency("d")] });
    const processed: Date[] = [];
    const consumer = (async () => {
      for await (const time of dependent) {
        processed.push(time);
        await cp.checkPulse(time);
      }
    })();
    await waitFor(() => dependent.paused);
    expect(processed).toEqual([at(0), at(10), at(20)]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(pulled).toBe(3);
    expect(bystander.paused).toBe(false);
    await cp.heartbeat(at(25));
    await consumer;
    expect(processed).toEqual([at(0), at(10), at(20), at(30)]);
  });
});

describe("Difference 9 from Slipstream: the caches round-trip rich values", () => {
  it("MemoryCache round-trips Date, bigint, Map, Set, typed arrays and nested objects; a missing key is undefined", () => {
    const cache = new MemoryCache();
    const value = {
      when: at(0),
      big: 2n ** 70n,
      map: new Map([["k", new Set([1])]]),
      bytes: new Uint8Array([1, 2]),
    };
    cache.set("k", value);
    expect(cache.get("k")).toEqual(value);
    expect(cache.get("missing")).toBeUndefined();
  });
  // SqliteCache: src/sqlite-cache.test.ts; lazy loading: test/sqlite-loading.test.ts.
});

describe("Difference 10 from Slipstream: the recovery callback runs before the resume", () => {
  it("the callback sees a dependent that is still paused, and the resume follows even when it throws", async () => {
    const dependent = pausable((async function* () {})());
    const seen: boolean[] = [];
    const cp = new Checkpoint("c", {
      dependent,
      dependencies: [new Dependency("d")],
      recoveryCallback: () => {
        seen.push(dependent.paused);
        throw new Error("seek failed");
      },
    });
    await cp.checkPulse(at(0));
    await cp.checkPulse(at(11));
    await expect(cp.heartbeat(at(12))).rejects.toThrow("seek failed");
    expect(seen).toEqual([true]);
    expect(dependent.paused).toBe(false);
  });
});

describe("Difference 11 from Slipstream: calls on one checkpoint are serialised", () => {
  it("a heartbeat made during a slow downtime callback runs after it, where Slipstream interleaved them", async () => {
    const gate = deferred();
    const log: string[] = [];
    const cp = new Checkpoint("c", {
      dependencies: [new Dependency("d")],
      downtimeCallback: async () => {
        log.push("callback start");
        await gate.promise;
        log.push("callback end");
      },
    });
    await cp.checkPulse(at(0));
    const pulse = cp.checkPulse(at(11));
    const heartbeat = cp.heartbeat(at(12)).then((result) => log.push(`heartbeat isLate=${result.isLate}`));
    await waitFor(() => log.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual(["callback start"]);
    gate.resolve();
    await Promise.all([pulse, heartbeat]);
    expect(log).toEqual(["callback start", "callback end", "heartbeat isLate=false"]);
  });
});

describe("Difference 12 from Slipstream: options are checked strictly", () => {
  it("names are non-empty, a checkpoint needs a dependency that no other checkpoint owns", async () => {
    await expectCode(
      () => new Checkpoint("", { dependencies: [new Dependency("d")] }),
      "ERR_X_CHECKPOINT_INVALID_OPTION",
    );
    await expectCode(() => new Dependency(""), "ERR_X_CHECKPOINT_INVALID_OPTION");
    await expectCode(() => new Checkpoint("c", { dependencies: [] }), "ERR_X_CHECKPOINT_INVALID_OPTION");
    const dep = new Dependency("d");
    new Checkpoint("a", { dependencies: [dep] });
    await expectCode(() => new Checkpoint("b", { dependencies: [dep] }), "ERR_X_CHECKPOINT_INVALID_OPTION");
  });

  it("a constructor given an asynchronous cache throws ERR_X_CHECKPOINT_ASYNC_CACHE; open accepts it", async () => {
    const cache = new AsyncCache();
    await expectCode(
      () => new Checkpoint("c", { dependencies: [new Dependency("d")], cache }),
      "ERR_X_CHECKPOINT_ASYNC_CACHE",
    );
    const cp = await Checkpoint.open("c", { dependencies: [new Dependency("d")], cache });
    expect(await cp.checkPulse(at(0))).toBeUndefined();
  });
});

describe("Row 13, kept from Slipstream: the comparisons stay the same", () => {
  it("downtime and recovery compare strictly", async () => {
    const dep = new Dependency("d", { downtimeThresholdMs: 60_000 });
    const cp = new Checkpoint("c", { dependencies: [dep] });
    await cp.checkPulse(at(0));
    expect(await cp.checkPulse(at(1))).toBeUndefined();
    expect(await cp.checkPulse(at(2))).toBe(120_000);
    expect(await cp.heartbeat(at(2))).toMatchObject({ isLate: true });
    expect(await cp.heartbeat(new Date(at(2).getTime() + 1))).toMatchObject({ isLate: false });
  });

  it("the first pulse initialises a dependency never heard from, so it measures a gap of 0", async () => {
    const dep = new Dependency("d", { downtimeThresholdMs: 0 });
    const cp = new Checkpoint("c", { dependencies: [dep] });
    expect(await cp.checkPulse(at(0), { offset: 1 })).toBeUndefined();
    expect(dep.toJSON()).toEqual({ checkpointState: { offset: 1 }, checkpointMarker: at(0) });
  });

  it("callbacks get (checkpoint, dependency), and a sparse dependency without heartbeats is reported down", async () => {
    const args: unknown[][] = [];
    const dep = new Dependency("hourly");
    const cp = new Checkpoint("c", {
      dependencies: [dep],
      downtimeCallback: (...given) => void args.push(given),
    });
    await cp.checkPulse(at(0));
    expect(await cp.checkPulse(at(11))).toBe(660_000);
    expect(args).toEqual([[cp, dep]]);
  });
});
