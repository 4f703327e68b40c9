import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { at, deferred, expectCode, RecordingCache, recordingDependent } from "../test/helpers.js";
import { Checkpoint, Dependency, type DependencyCheck } from "./index.js";

const any: DependencyCheck = () => false;

describe("Checkpoint", () => {
  it("follows Slipstream's walk-through: first pulse, heartbeat, downtime, late heartbeat, recovery", async () => {
    const dep = new Dependency("dependency");
    const cp = new Checkpoint("dependent", { dependencies: [dep] });
    expect(await cp.checkPulse(at(0), { offset: 8 })).toBeUndefined();
    expect(dep.checkpointMarker).toEqual(at(0));
    expect(await cp.heartbeat(at(30))).toEqual({
      isLate: false,
      dependentMarker: at(0),
      dependencyMarker: at(30),
    });
    expect(await cp.checkPulse(at(60), { offset: 9 })).toBe(30 * 60_000);
    expect(await cp.heartbeat(at(45))).toEqual({
      isLate: true,
      dependentMarker: at(60),
      dependencyMarker: at(45),
    });
    expect(await cp.heartbeat(at(61))).toEqual({
      isLate: false,
      dependentMarker: at(60),
      dependencyMarker: at(61),
    });
  });

  describe("input validation", () => {
    it("rejects null and undefined markers everywhere, also with custom checks", async () => {
      const cp = new Checkpoint("c", {
        dependencies: [new Dependency("d", { downtimeCheck: any, recoveryCheck: any })],
      });
      for (const marker of [null, undefined]) {
        await expectCode(() => cp.checkPulse(marker), "ERR_X_CHECKPOINT_MARKER_TYPE");
        await expectCode(() => cp.heartbeat(marker), "ERR_X_CHECKPOINT_MARKER_TYPE");
      }
    });

    it("needs a valid Date where a default check applies, Dates of another realm included", async () => {
      const cp = new Checkpoint("c", { dependencies: [new Dependency("d")] });
      for (const marker of [1735725600000, "2025-01-01", new Date(Number.NaN), { getTime: () => 0 }]) {
        const error = await expectCode(() => cp.checkPulse(marker), "ERR_X_CHECKPOINT_MARKER_TYPE");
        expect(error.message).toContain('"d"');
        await expectCode(() => cp.heartbeat(marker), "ERR_X_CHECKPOINT_MARKER_TYPE");
      }
      expect(cp.stateMarker).toBeUndefined();
      const foreign = runInNewContext("new Date(Date.UTC(2025, 0, 1, 10))") as Date;
      expect(await cp.checkPulse(foreign)).toBeUndefined();
      expect(await cp.heartbeat(foreign)).toMatchObject({ isLate: false });
    });

    it("a default check on either side of any dependency makes checkPulse need Dates", async () => {
      const custom = new Dependency("custom", { downtimeCheck: any, recoveryCheck: any });
      const halfDefault = new Dependency("half", { downtimeCheck: any });
      const cp = new Checkpoint("c", { dependencies: [custom, halfDefault] });
      await expectCode(() => cp.checkPulse(5), "ERR_X_CHECKPOINT_MARKER_TYPE");
      await expectCode(() => cp.heartbeat(5, "half"), "ERR_X_CHECKPOINT_MARKER_TYPE");
      expect(await cp.heartbeat(5, "custom")).toEqual({
        isLate: false,
        dependentMarker: undefined,
        dependencyMarker: 5,
      });
    });

    it("resolves the heartbeat's dependency before it validates the marker", async () => {
      const cp = new Checkpoint("c", { dependencies: [new Dependency("a"), new Dependency("b")] });
      await expectCode(() => cp.heartbeat(null, "x"), "ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY");
      await expectCode(() => cp.heartbeat(null), "ERR_X_CHECKPOINT_DEPENDENCY_REQUIRED");
      await expectCode(() => cp.heartbeat(at(0), ""), "ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY");
      expect(await cp.heartbeat(at(0), "b")).toMatchObject({ dependencyMarker: at(0) });
      const single = new Checkpoint("s", { dependencies: [new Dependency("only")] });
      expect(await single.heartbeat(at(0), undefined)).toMatchObject({ dependencyMarker: at(0) });
      expect(await single.heartbeat(at(1), null as never)).toMatchObject({ dependencyMarker: at(1) });
    });

    it.each([
      ["an array", [1]],
      ["a Map", new Map([["a", 1]])],
      ["a class instance", new (class State {})()],
      ["a string", "offset=1"],
      ["null", null],
      ["a top-level function", { fn: () => {} }],
      ["a top-level symbol", { s: Symbol("s") }],
    ])(
      "rejects %s as a pulse state with ERR_X_CHECKPOINT_STATE_TYPE, changing nothing",
      async (_label, state) => {
        const cache = new RecordingCache();
        const cp = new Checkpoint("c", { dependencies: [new Dependency("d")], cache });
        await expectCode(() => cp.checkPulse(at(0), state as never), "ERR_X_CHECKPOINT_STATE_TYPE");
        expect(cp.toJSON()).toEqual(new Checkpoint("x", { dependencies: [new Dependency("d")] }).toJSON());
        expect(cache.writes).toEqual([]);
      },
    );

    it("accepts a null-prototype state", async () => {
      const cp = new Checkpoint("c", { dependencies: [new Dependency("d")] });
      const state = Object.assign(Object.create(null) as Record<string, unknown>, { offset: 1 });
      await cp.checkPulse(at(0), state);
      expect(cp.state).toEqual({ offset: 1 });
    });

    it("a nested value that cannot be cloned rejects when it is cloned", async () => {
      const cp = new Checkpoint("c", { dependencies: [new Dependency("d")] });
      await expectCode(
        () => cp.checkPulse(at(0), { nested: { fn: () => {} } }),
        "ERR_X_CHECKPOINT_STATE_TYPE",
      );
    });
  });

  describe("checkPulse", () => {
    it("shallow-merges the state: keys are never removed, a key given again is replaced", async () => {
      const cp = new Checkpoint("c", { dependencies: [new Dependency("d")] });
      await cp.checkPulse(at(0), { p0: 1, p1: { deep: 1 } });
      await cp.checkPulse(at(1), { p1: { other: 2 } });
      await cp.checkPulse(at(2));
      expect(cp.state).toEqual({ p0: 1, p1: { other: 2 } });
      expect(cp.stateMarker).toEqual(at(2));
    });

    it("runs every dependency's downtime check on every pulse, down or not", async () => {
      const calls: string[] = [];
      const check =
        (name: string, down: boolean): DependencyCheck =>
        () => {
          calls.push(name);
          return down ? "down" : undefined;
        };
      const cp = new Checkpoint("c", {
        dependencies: [
          new Dependency("a", { downtimeCheck: check("a", true), recoveryCheck: any }),
          new Dependency("b", { downtimeCheck: check("b", false), recoveryCheck: any }),
        ],
      });
      await cp.checkPulse(1);
      await cp.checkPulse(2);
      expect(calls).toEqual(["a", "b", "a", "b"]);
    });

    it("a falsy check result never ends a downtime; only a heartbeat can", async () => {
      let down: unknown = 1;
      const dep = new Dependency("d", { downtimeCheck: () => down, recoveryCheck: () => true });
      const cp = new Checkpoint("c", { dependencies: [dep] });
      expect(await cp.checkPulse(1)).toBe(1);
      down = 0;
      expect(await cp.checkPulse(2)).toBe(1);
      expect(dep.isDown).toBe(true);
      await cp.heartbeat(3);
      expect(dep.isDown).toBe(false);
      expect(await cp.checkPulse(4)).toBeUndefined();
    });

    it("a check that throws rejects the pulse; later dependencies are not checked, writes stay", async () => {
      const failure = new Error("check failed");
      const checked: string[] = [];
      const cache = new RecordingCache();
      const cp = new Checkpoint("c", {
        cache,
        dependencies: [
          new Dependency("a", {
            downtimeCheck: () => {
              throw failure;
            },
            recoveryCheck: any,
          }),
          new Dependency("b", { downtimeCheck: () => checked.push("b"), recoveryCheck: any }),
        ],
      });
      await expect(cp.checkPulse(1, { offset: 1 })).rejects.toBe(failure);
      expect(checked).toEqual([]);
      expect(cp.state).toEqual({ offset: 1 });
      expect(cache.writes).toEqual([
        "__c__state",
        "__c__state_marker",
        "__c_a_checkpoint_state",
        "__c_a_checkpoint_marker",
      ]);
    });
  });

  describe("heartbeat", () => {
    it("never runs the downtime check: a dependency that is not down is not late, however far behind", async () => {
      let downtimeChecks = 0;
      const dep = new Dependency("d", {
        downtimeCheck: (cp, d) => {
          downtimeChecks++;
          return Dependency.defaultDowntimeCheck(cp, d);
        },
      });
      const cp = new Checkpoint("c", { dependencies: [dep] });
      await cp.checkPulse(at(600));
      expect(downtimeChecks).toBe(1);
      expect(await cp.heartbeat(at(0))).toEqual({
        isLate: false,
        dependentMarker: at(600),
        dependencyMarker: at(0),
      });
      expect(downtimeChecks).toBe(1);
    });

    it("a heartbeat before the first pulse sets the marker, so the pulse measures the gap from it", async () => {
      const dep = new Dependency("d");
      const cp = new Checkpoint("c", { dependencies: [dep] });
      expect(await cp.heartbeat(at(0))).toEqual({
        isLate: false,
        dependentMarker: undefined,
        dependencyMarker: at(0),
      });
      expect(dep.checkpointState).toEqual({});
      expect(await cp.checkPulse(at(15))).toBe(15 * 60_000);
    });

    it("runs the recovery check only while the dependency is down, awaiting a thenable", async () => {
      const results = [false, true];
      let recoveryChecks = 0;
      const dep = new Dependency("d", {
        downtimeCheck: (cp) => cp.stateMarker === "late",
        recoveryCheck: async () => {
          recoveryChecks++;
          return results.shift();
        },
      });
      const cp = new Checkpoint("c", { dependencies: [dep] });
      await cp.heartbeat("x");
      expect(recoveryChecks).toBe(0);
      await cp.checkPulse("late");
      expect(await cp.heartbeat("y")).toMatchObject({ isLate: true });
      expect(await cp.heartbeat("z")).toMatchObject({ isLate: false });
      expect(recoveryChecks).toBe(2);
    });
  });

  describe("custom hooks", () => {
    it("a thenable downtime result is awaited, and its truthy value is the downtime whatever its type", async () => {
      const downtime = { since: "yesterday" };
      const dep = new Dependency("d", {
        // A bare thenable, not a promise: the checkpoint awaits any thenable.
        // biome-ignore lint/suspicious/noThenProperty: the point of this test
        downtimeCheck: () => ({ then: (resolve: (value: unknown) => void) => resolve(downtime) }),
        recoveryCheck: any,
      });
      const cp = new Checkpoint("c", { dependencies: [dep] });
      const events: unknown[] = [];
      cp.on("down", (_d, value) => events.push(value));
      expect(await cp.checkPulse("m")).toBe(downtime);
      expect(events).toEqual([downtime]);
    });

    it("hooks get (checkpoint, dependency) and markers are stored as given", async () => {
      const seen: unknown[] = [];
      const marker = { offset: 10n };
      const dep = new Dependency("d", {
        downtimeCheck: (cp, d) => {
          seen.push(cp, d);
          return false;
        },
        recoveryCheck: any,
      });
      const cp = new Checkpoint("c", { dependencies: [dep] });
      await cp.checkPulse(marker);
      expect(seen).toEqual([cp, dep]);
      expect(cp.stateMarker).toBe(marker);
      expect(dep.checkpointMarker).toBe(marker);
    });
  });

  describe("callbacks and order", () => {
    it("downtime: is-down written, pause, down event, then the callback, which sees it all", async () => {
      const cache = new RecordingCache();
      const log: string[] = [];
      const dependent = {
        pause: () => {
          log.push(`pause (is-down stored: ${String(cache.get("__c_d_checkpoint_is_down"))})`);
        },
        resume: () => log.push("resume"),
      };
      const dep = new Dependency("d");
      const cp = new Checkpoint("c", {
        dependent,
        cache,
        dependencies: [dep],
        downtimeCallback: (c, d) => {
          expect(c).toBe(cp);
          expect(d).toBe(dep);
          log.push(`callback (isDown: ${d.isDown})`);
        },
      });
      cp.on("down", (d, downtime) => log.push(`down ${d.name} ${String(downtime)}`));
      await cp.checkPulse(at(0));
      await cp.checkPulse(at(11));
      expect(log).toEqual(["pause (is-down stored: true)", "down d 660000", "callback (isDown: true)"]);
    });

    it("recovery: is-down written, up event, callback while still paused, then resume", async () => {
      const cache = new RecordingCache();
      const dependent = recordingDependent();
      const dep = new Dependency("d");
      const cp = new Checkpoint("c", {
        dependent,
        cache,
        dependencies: [dep],
        recoveryCallback: (_c, d) => {
          dependent.log.push(
            `callback (isDown: ${d.isDown}, stored: ${String(cache.get("__c_d_checkpoint_is_down"))})`,
          );
        },
      });
      cp.on("up", (d) => dependent.log.push(`up ${d.name}`));
      await cp.checkPulse(at(0));
      await cp.checkPulse(at(11));
      await cp.heartbeat(at(12));
      expect(dependent.log).toEqual(["pause", "up d", "callback (isDown: false, stored: false)", "resume"]);
    });

    it("the dependent resumes even when the recovery callback throws, and the heartbeat rejects with its error", async () => {
      const failure = new Error("seek failed");
      const dependent = recordingDependent();
      const dep = new Dependency("d");
      const cp = new Checkpoint("c", {
        dependent,
        dependencies: [dep],
        recoveryCallback: () => Promise.reject(failure),
      });
      await cp.checkPulse(at(0));
      await cp.checkPulse(at(11));
      await expect(cp.heartbeat(at(12))).rejects.toBe(failure);
      expect(dependent.log).toEqual(["pause", "resume"]);
      expect(dep.isDown).toBe(false);
    });

    it("a throwing up listener rejects the heartbeat, but the dependent still resumes", async () => {
      const dependent = recordingDependent();
      const recovered: string[] = [];
      const cp = new Checkpoint("c", {
        dependent,
        dependencies: [new Dependency("d")],
        recoveryCallback: () => recovered.push("callback"),
      });
      const failure = new Error("listener");
      cp.on("up", () => {
        throw failure;
      });
      await cp.checkPulse(at(0));
      await cp.checkPulse(at(11));
      await expect(cp.heartbeat(at(12))).rejects.toBe(failure);
      expect(dependent.log).toEqual(["pause", "resume"]);
      expect(recovered).toEqual([]);
    });

    it("a throwing down listener rejects the pulse after the pause; the episode stays open", async () => {
      const dependent = recordingDependent();
      const callbacks: string[] = [];
      const dep = new Dependency("d");
      const cp = new Checkpoint("c", {
        dependent,
        dependencies: [dep],
        downtimeCallback: () => callbacks.push("downtime"),
      });
      const failure = new Error("listener");
      cp.once("down", () => {
        throw failure;
      });
      await cp.checkPulse(at(0));
      await expect(cp.checkPulse(at(11))).rejects.toBe(failure);
      expect(dep.isDown).toBe(true);
      expect(await cp.checkPulse(at(12))).toBe(12 * 60_000);
      expect(dependent.log).toEqual(["pause"]);
      expect(callbacks).toEqual([]);
    });

    it("logs one debug line at each downtime and recovery", async () => {
      const lines: [object, string | undefined][] = [];
      const debug = (fields: object | string, message?: string) => {
        lines.push([fields as object, message]);
      };
      const logger = { debug, info: debug, warn: debug, error: debug };
      const cp = new Checkpoint("c", { dependencies: [new Dependency("d")], logger });
      await cp.checkPulse(at(0));
      await cp.checkPulse(at(11));
      await cp.checkPulse(at(12));
      await cp.heartbeat(at(13));
      expect(lines).toHaveLength(2);
      expect(lines[0]?.[0]).toMatchObject({ checkpoint: "c", dependency: "d", downtime: "660000" });
      expect(lines[1]?.[0]).toMatchObject({ checkpoint: "c", dependency: "d" });
    });
  });

  describe("serialised calls", () => {
    it("runs calls one at a time in call order, whether each fulfils or rejects", async () => {
      const gate = deferred<boolean>();
      const log: string[] = [];
      const dep = new Dependency("d", {
        downtimeCheck: async (cp) => {
          log.push(`check ${String(cp.stateMarker)} start`);
          const result = cp.stateMarker === 1 ? await gate.promise : false;
          log.push(`check ${String(cp.stateMarker)} end`);
          return result;
        },
        recoveryCheck: (_cp, d) => {
          log.push(`recovery check ${String(d.checkpointMarker)}`);
          return true;
        },
      });
      const cp = new Checkpoint("c", { dependencies: [dep] });
      const first = cp.checkPulse(1);
      const second = cp.heartbeat(null);
      const third = cp.heartbeat(2);
      const fourth = cp.checkPulse(3);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(log).toEqual(["check 1 start"]);
      gate.resolve(true);
      expect(await first).toBe(true);
      await expectCode(() => second, "ERR_X_CHECKPOINT_MARKER_TYPE");
      expect(await third).toMatchObject({ isLate: false });
      await fourth;
      expect(log).toEqual([
        "check 1 start",
        "check 1 end",
        "recovery check 2",
        "check 3 start",
        "check 3 end",
      ]);
    });
  });
});
