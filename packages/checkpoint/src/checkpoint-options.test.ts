import { PassThrough, Readable } from "node:stream";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { AsyncCache, at, expectCode, RecordingCache, recordingDependent } from "../test/helpers.js";
import { Checkpoint, Dependency, ErrorCode, MemoryCache, pausable } from "./index.js";

describe("Checkpoint options", () => {
  it("has the documented defaults and read-only views", () => {
    const a = new Dependency("a");
    const b = new Dependency("b");
    const cp = new Checkpoint("c", { dependencies: [a, b] });
    expect(cp.name).toBe("c");
    expect(cp.dependent).toBeUndefined();
    expect(cp.pauseDependent).toBe(true);
    expect([...cp.dependencies.keys()]).toEqual(["a", "b"]);
    expect(cp.dependencies.get("b")).toBe(b);
    expect(cp.state).toEqual({});
    expect(cp.stateMarker).toBeUndefined();
    expect(cp.dependency("a")).toBe(a);
  });

  it.each([
    ["", {}, "name", '""'],
    [7, {}, "name", "7"],
    ["c", { dependencies: [] }, "dependencies", ""],
    ["c", { dependencies: undefined }, "dependencies", "undefined"],
    ["c", { dependencies: "a" }, "dependencies", '"a"'],
    ["c", { dependencies: [{ name: "a" }] }, "dependencies.0", ""],
    ["c", { cacheKeyPrefix: 1 }, "cacheKeyPrefix", "1"],
    ["c", { pauseDependent: "yes" }, "pauseDependent", '"yes"'],
    ["c", { downtimeCallback: 1 }, "downtimeCallback", "1"],
    ["c", { recoveryCallback: {} }, "recoveryCallback", "{}"],
    ["c", { cache: { set() {} } }, "cache", ""],
    ["c", { cache: { get() {} } }, "cache", ""],
    ["c", { logger: console.log }, "logger", ""],
  ])("rejects name %j with options %j, naming %s", async (name, options, option, value) => {
    const withDependency =
      "dependencies" in options ? options : { dependencies: [new Dependency("d")], ...options };
    for (const create of [
      () => new Checkpoint(name as string, withDependency as never),
      () => Checkpoint.open(name as string, withDependency as never),
    ]) {
      const error = await expectCode(create, "ERR_X_CHECKPOINT_INVALID_OPTION");
      expect(error.message).toContain(`invalid option ${option}: ${value}`);
    }
  });

  it("names an unknown option and the option it most likely meant", async () => {
    const options = { dependencies: [new Dependency("d")], dependents: [] };
    const error = await expectCode(
      () => new Checkpoint("c", options as never),
      "ERR_X_CHECKPOINT_INVALID_OPTION",
    );
    expect(error.message).toBe("unknown option dependents: []; did you mean dependent?");
  });

  it("rejects duplicate dependency names (Slipstream kept the last one)", async () => {
    const error = await expectCode(
      () => new Checkpoint("c", { dependencies: [new Dependency("a"), new Dependency("a")] }),
      "ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY",
    );
    expect(error.message).toContain('"a"');
    await expectCode(
      () => Checkpoint.open("c", { dependencies: [new Dependency("a"), new Dependency("a")] }),
      "ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY",
    );
  });

  it("a dependency belongs to one checkpoint", async () => {
    const shared = new Dependency("shared");
    new Checkpoint("first", { dependencies: [shared] });
    const error = await expectCode(
      () => new Checkpoint("second", { dependencies: [new Dependency("other"), shared] }),
      "ERR_X_CHECKPOINT_INVALID_OPTION",
    );
    expect(error.message).toContain("invalid option dependencies.1: Dependency(shared)");
    await expectCode(
      () => Checkpoint.open("third", { dependencies: [shared] }),
      "ERR_X_CHECKPOINT_INVALID_OPTION",
    );
  });

  it("a constructor or open that fails takes over no dependency", async () => {
    const dep = new Dependency("d");
    const corrupt = new MemoryCache();
    corrupt.set("__c__state", "not an object");
    await expectCode(
      () => new Checkpoint("c", { dependencies: [dep], cache: corrupt }),
      "ERR_X_CHECKPOINT_STATE_TYPE",
    );
    await expectCode(
      () => Checkpoint.open("c", { dependencies: [dep], cache: corrupt }),
      "ERR_X_CHECKPOINT_STATE_TYPE",
    );
    await expectCode(
      () => new Checkpoint("c", { dependencies: [dep], cache: new AsyncCache() }),
      "ERR_X_CHECKPOINT_ASYNC_CACHE",
    );
    await expectCode(
      () => new Checkpoint("c", { dependencies: [dep, new Dependency("d")] }),
      "ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY",
    );
    await expectCode(
      () => new Checkpoint("c", { dependencies: [dep], pauseDependent: 1 as never }),
      "ERR_X_CHECKPOINT_INVALID_OPTION",
    );

    const downCache = new MemoryCache();
    downCache.set("__c_d_checkpoint_is_down", true);
    const failure = new Error("pause failed");
    const dependent = { pause: async () => Promise.reject(failure), resume() {} };
    await expect(Checkpoint.open("c", { dependencies: [dep], cache: downCache, dependent })).rejects.toBe(
      failure,
    );
    expect(dep.isDown).toBe(false);

    const cp = new Checkpoint("c", { dependencies: [dep] });
    expect(cp.dependency("d")).toBe(dep);
  });

  it("validates every option before it reads the cache", async () => {
    const cache = new RecordingCache();
    await expectCode(
      () =>
        new Checkpoint("c", { dependencies: [new Dependency("d")], cache, pauseDependent: null as never }),
      "ERR_X_CHECKPOINT_INVALID_OPTION",
    );
    await expectCode(
      () => new Checkpoint("c", { dependencies: [new Dependency("d"), new Dependency("d")], cache }),
      "ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY",
    );
    expect(cache.reads).toEqual([]);
  });

  it("dependency(name) throws for an unknown name, the empty string included", async () => {
    const cp = new Checkpoint("c", { dependencies: [new Dependency("a")] });
    for (const name of ["b", "", "A"]) {
      const error = await expectCode(() => cp.dependency(name), "ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY");
      expect(error.message).toContain('"a"');
    }
  });

  it("toJSON has exactly state, stateMarker and checkpoints, in dependency order", async () => {
    const cp = new Checkpoint("c", { dependencies: [new Dependency("z"), new Dependency("a")] });
    expect(cp.toJSON()).toEqual({
      state: {},
      stateMarker: undefined,
      checkpoints: {
        z: { checkpointState: undefined, checkpointMarker: undefined },
        a: { checkpointState: undefined, checkpointMarker: undefined },
      },
    });
    await cp.checkPulse(at(0), { offset: 3 });
    const json = cp.toJSON();
    expect(Object.keys(json)).toEqual(["state", "stateMarker", "checkpoints"]);
    expect(Object.keys(json.checkpoints)).toEqual(["z", "a"]);
    expect(json.checkpoints.a).toEqual({ checkpointState: { offset: 3 }, checkpointMarker: at(0) });
  });

  it("toString starts with Checkpoint(<name>) and survives a bigint state", async () => {
    const cp = new Checkpoint("orders", { dependencies: [new Dependency("d")] });
    await cp.checkPulse(at(0), { offset: 12345678901234567890n });
    expect(String(cp)).toMatch(/^Checkpoint\(orders\) /);
    expect(String(cp)).toContain("12345678901234567890n");
  });

  it("toString never throws, even for a loaded state whose inspection throws", () => {
    const hostile = {
      [inspect.custom]() {
        throw new Error("cannot be shown");
      },
    };
    const cache = { get: (key: string) => (key === "__c__state" ? { hostile } : undefined), set() {} };
    const cp = new Checkpoint("c", { dependencies: [new Dependency("d")], cache });
    expect(String(cp)).toBe("Checkpoint(c)");
  });

  describe("pausable dependent", () => {
    const downtime = async (cp: Checkpoint) => {
      await cp.checkPulse(at(0));
      await cp.checkPulse(at(11));
      await cp.heartbeat(at(12));
    };

    it("pauses and resumes an object, or a function, with pause() and resume()", async () => {
      const object = recordingDependent();
      await downtime(new Checkpoint("c", { dependent: object, dependencies: [new Dependency("d")] }));
      expect(object.log).toEqual(["pause", "resume"]);

      const log: string[] = [];
      const fn = Object.assign(() => {}, {
        pause: () => log.push("pause"),
        resume: () => log.push("resume"),
      });
      await downtime(new Checkpoint("c", { dependent: fn, dependencies: [new Dependency("d")] }));
      expect(log).toEqual(["pause", "resume"]);
    });

    it("calls pause() and resume() with no arguments, on the dependent, awaiting a returned promise", async () => {
      const calls: unknown[][] = [];
      const events: string[] = [];
      const dependent = {
        async pause(...args: unknown[]) {
          calls.push(args);
          expect(this).toBe(dependent);
          await new Promise((resolve) => setTimeout(resolve, 20));
          events.push("paused");
        },
        async resume(...args: unknown[]) {
          calls.push(args);
          await new Promise((resolve) => setTimeout(resolve, 20));
          events.push("resumed");
        },
      };
      const cp = new Checkpoint("c", { dependent, dependencies: [new Dependency("d")] });
      cp.on("down", () => events.push("down"));
      await cp.checkPulse(at(0));
      await cp.checkPulse(at(11));
      await cp.heartbeat(at(12));
      events.push("heartbeat settled");
      expect(calls).toEqual([[], []]);
      expect(events).toEqual(["paused", "down", "resumed", "heartbeat settled"]);
    });

    it.each([
      ["undefined", undefined],
      ["a plain async iterable", (async function* () {})()],
      [
        "an object with only pause()",
        {
          pause: () => {
            throw new Error("must not be called");
          },
        },
      ],
      [
        "an object with only resume()",
        {
          resume: () => {
            throw new Error("must not be called");
          },
        },
      ],
    ])("never pauses %s, and everything else works the same", async (_label, dependent) => {
      const cache = new MemoryCache();
      const events: string[] = [];
      const cp = new Checkpoint("c", {
        dependent,
        dependencies: [new Dependency("d")],
        cache,
        downtimeCallback: () => events.push("downtime callback"),
        recoveryCallback: () => events.push("recovery callback"),
      });
      cp.on("down", () => events.push("down")).on("up", () => events.push("up"));
      await cp.checkPulse(at(0));
      expect(await cp.checkPulse(at(11))).toBe(11 * 60_000);
      expect(await cp.heartbeat(at(12))).toEqual({
        isLate: false,
        dependentMarker: at(11),
        dependencyMarker: at(12),
      });
      expect(events).toEqual(["down", "downtime callback", "up", "recovery callback"]);
      expect(cache.get("__c_d_checkpoint_is_down")).toBe(false);
    });

    it("refuses a Node Readable, whose pause() does not stop a for await, naming pausable()", async () => {
      // The trap itself: pause() on a Readable does not stop a `for await` over it.
      const flowing = Readable.from(["a", "b", "c"]);
      const seen: string[] = [];
      for await (const item of flowing) {
        seen.push(item);
        flowing.pause();
      }
      expect(flowing.isPaused()).toBe(true);
      expect(seen).toEqual(["a", "b", "c"]);

      for (const dependent of [Readable.from([1]), new PassThrough()]) {
        const error = await expectCode(
          () => new Checkpoint("c", { dependent, dependencies: [new Dependency("d")] }),
          ErrorCode.INVALID_OPTION,
        );
        expect(error.message).toMatch(/^invalid option dependent: .*pausable\(readable\)/);
        await expectCode(
          () => Checkpoint.open("c", { dependent, dependencies: [new Dependency("d")] }),
          ErrorCode.INVALID_OPTION,
        );
      }
      // Refused before the dependency is taken over: it can still join another checkpoint.
      const dep = new Dependency("d");
      await expectCode(
        () => new Checkpoint("c", { dependent: Readable.from([1]), dependencies: [dep] }),
        ErrorCode.INVALID_OPTION,
      );
      const unpaused = new Checkpoint("c", {
        dependent: Readable.from([1]),
        pauseDependent: false,
        dependencies: [dep],
      });
      expect(unpaused.dependent).toBeInstanceOf(Readable);
    });

    it("pauses a Node Readable wrapped in pausable(): no record is delivered while the dependency is down", async () => {
      const orders = pausable<number>(Readable.from([1, 2, 3]));
      const cp = new Checkpoint("c", { dependent: orders, dependencies: [new Dependency("d")] });
      await cp.checkPulse(at(0));
      await cp.checkPulse(at(11));
      let settled = false;
      const next = orders.next().then((result) => {
        settled = true;
        return result;
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(settled).toBe(false);
      await cp.heartbeat(at(12));
      expect(await next).toEqual({ done: false, value: 1 });
    });

    it("with pauseDependent: false never calls pause() or resume()", async () => {
      const dependent = recordingDependent();
      const cp = new Checkpoint("c", {
        dependent,
        pauseDependent: false,
        dependencies: [new Dependency("d")],
      });
      expect(cp.pauseDependent).toBe(false);
      const downtimes: unknown[] = [];
      cp.on("down", (_dep, downtime) => downtimes.push(downtime));
      await downtime(cp);
      expect(downtimes).toEqual([11 * 60_000]);
      expect(dependent.log).toEqual([]);
    });
  });
});
