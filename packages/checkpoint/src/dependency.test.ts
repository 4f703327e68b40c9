import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { at, expectCode } from "../test/helpers.js";
import { Checkpoint, Dependency } from "./index.js";

describe("Dependency", () => {
  it("has the documented defaults", () => {
    const dep = new Dependency("prices");
    expect(dep.name).toBe("prices");
    expect(dep.stream).toBeUndefined();
    expect(dep.downtimeThresholdMs).toBe(600_000);
    expect(dep.downtimeCheck).toBe(Dependency.defaultDowntimeCheck);
    expect(dep.recoveryCheck).toBe(Dependency.defaultRecoveryCheck);
    expect(dep.checkpointState).toBeUndefined();
    expect(dep.checkpointMarker).toBeUndefined();
    expect(dep.isDown).toBe(false);
  });

  it("exposes the given stream and hooks", () => {
    const stream = { any: "thing" };
    const downtimeCheck = () => false;
    const recoveryCheck = async () => true;
    const dep = new Dependency("d", { stream, downtimeThresholdMs: 0, downtimeCheck, recoveryCheck });
    expect(dep.stream).toBe(stream);
    expect(dep.downtimeThresholdMs).toBe(0);
    expect(dep.downtimeCheck).toBe(downtimeCheck);
    expect(dep.recoveryCheck).toBe(recoveryCheck);
  });

  it.each([
    ["", "name"],
    [42, "name"],
    [undefined, "name"],
  ])("rejects the name %j, naming the option and the value", async (name, option) => {
    const error = await expectCode(() => new Dependency(name as string), "ERR_X_CHECKPOINT_INVALID_OPTION");
    expect(error.message).toContain(`invalid option ${option}: ${name === "" ? '""' : String(name)}`);
  });

  it.each([
    [{ downtimeThresholdMs: -1 }, "downtimeThresholdMs", "-1"],
    [{ downtimeThresholdMs: Number.NaN }, "downtimeThresholdMs", "NaN"],
    [{ downtimeThresholdMs: Number.POSITIVE_INFINITY }, "downtimeThresholdMs", "Infinity"],
    [{ downtimeThresholdMs: "600000" }, "downtimeThresholdMs", '"600000"'],
    [
      { downtimeThresholdMs: 2 ** 31 },
      "downtimeThresholdMs",
      "2147483648 (expected a duration in ms from 0 to",
    ],
    [{ downtimeCheck: "yes" }, "downtimeCheck", '"yes"'],
    [{ recoveryCheck: 1 }, "recoveryCheck", "1"],
  ])("rejects the options %j", async (options, option, value) => {
    const error = await expectCode(
      () => new Dependency("d", options as never),
      "ERR_X_CHECKPOINT_INVALID_OPTION",
    );
    expect(error.message).toContain(`invalid option ${option}: ${value}`);
  });

  it("names an unknown option and the one it most likely meant", async () => {
    const error = await expectCode(
      () => new Dependency("d", { downtimeThreshold: 5 } as never),
      "ERR_X_CHECKPOINT_INVALID_OPTION",
    );
    expect(error.message).toBe("unknown option downtimeThreshold: 5; did you mean downtimeThresholdMs?");
  });

  it("toJSON has exactly checkpointState and checkpointMarker, both present when undefined", () => {
    const json = new Dependency("d").toJSON();
    expect(Object.keys(json)).toEqual(["checkpointState", "checkpointMarker"]);
    expect(json).toEqual({ checkpointState: undefined, checkpointMarker: undefined });
  });

  it("toString starts with Dependency(<name>) and never throws", async () => {
    const dep = new Dependency("prices");
    const cp = new Checkpoint("c", { dependencies: [dep] });
    await cp.checkPulse(at(0), { big: 10n, nested: { more: [1n] } });
    expect(String(dep)).toMatch(/^Dependency\(prices\) /);
    expect(String(dep)).toContain("10n");
    expect(String(new Dependency("x"))).toMatch(/^Dependency\(x\)/);
  });

  it("never reads or consumes the stream", async () => {
    const stream = {
      [Symbol.asyncIterator]() {
        throw new Error("the checkpoint consumed the dependency stream");
      },
    };
    const dep = new Dependency("d", { stream });
    const cp = new Checkpoint("c", { dependencies: [dep] });
    await cp.checkPulse(at(0));
    expect(await cp.checkPulse(at(20))).toBe(20 * 60_000);
    await cp.heartbeat(at(21));
    expect(dep.isDown).toBe(false);
  });

  describe("default checks", () => {
    // The default checks read only these three properties.
    const pair = (stateMarker: unknown, checkpointMarker: unknown, downtimeThresholdMs = 600_000) =>
      [
        { stateMarker } as unknown as Checkpoint,
        { checkpointMarker, downtimeThresholdMs } as unknown as Dependency,
      ] as const;

    it("downtime: the gap in ms when strictly greater than the threshold", () => {
      expect(Dependency.defaultDowntimeCheck(...pair(at(11), at(0)))).toBe(11 * 60_000);
      expect(Dependency.defaultDowntimeCheck(...pair(at(10), at(0)))).toBeUndefined();
      expect(Dependency.defaultDowntimeCheck(...pair(at(0), at(0), 0))).toBeUndefined();
      expect(Dependency.defaultDowntimeCheck(...pair(new Date(1), new Date(0), 0))).toBe(1);
      expect(Dependency.defaultDowntimeCheck(...pair(at(0), at(30)))).toBeUndefined();
    });

    it("recovery: true only when the dependency marker is strictly later", () => {
      expect(Dependency.defaultRecoveryCheck(...pair(at(0), at(1)))).toBe(true);
      expect(Dependency.defaultRecoveryCheck(...pair(at(0), at(0)))).toBe(false);
      expect(Dependency.defaultRecoveryCheck(...pair(at(1), at(0)))).toBe(false);
    });

    it("throws ERR_X_CHECKPOINT_MARKER_TYPE unless both markers are valid Dates, showing both", async () => {
      for (const check of [Dependency.defaultDowntimeCheck, Dependency.defaultRecoveryCheck]) {
        const error = await expectCode(() => check(...pair(5, at(0))), "ERR_X_CHECKPOINT_MARKER_TYPE");
        expect(error.message).toContain("state marker 5");
        expect(error.message).toContain("2025-01-01T10:00:00.000Z");
        expect(error.message).toContain("custom check");
        await expectCode(() => check(...pair(at(0), new Date(Number.NaN))), "ERR_X_CHECKPOINT_MARKER_TYPE");
        await expectCode(() => check(...pair(at(0), undefined)), "ERR_X_CHECKPOINT_MARKER_TYPE");
      }
    });

    it("accepts Dates from another realm", () => {
      const foreign = runInNewContext("new Date(Date.UTC(2025, 0, 1, 11))") as Date;
      expect(foreign instanceof Date).toBe(false);
      expect(Dependency.defaultDowntimeCheck(...pair(foreign, at(0)))).toBe(60 * 60_000);
    });

    it("can be called directly through dep.downtimeCheck", async () => {
      const dep = new Dependency("d");
      const cp = new Checkpoint("c", { dependencies: [dep] });
      await cp.checkPulse(at(0));
      await cp.heartbeat(at(-30));
      expect(dep.downtimeCheck(cp, dep)).toBe(30 * 60_000);
      expect(dep.recoveryCheck(cp, dep)).toBe(false);
    });
  });
});
