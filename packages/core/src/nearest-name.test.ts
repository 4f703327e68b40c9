import { describe, expect, it } from "vitest";
import { nearestName } from "./nearest-name.js";

const guard = ["timeoutMs", "gracePeriodMs", "checkIntervalMs", "interruptType", "logger", "signal"];

describe("nearestName", () => {
  it.each([
    ["timeout", "timeoutMs"],
    ["timeout_ms", "timeoutMs"],
    ["TIMEOUT-MS", "timeoutMs"],
    ["timeoutMS", "timeoutMs"],
    ["timoutMs", "timeoutMs"],
    ["grace_period", "gracePeriodMs"],
    ["loger", "logger"],
  ])("%s → %s", (name, meant) => {
    expect(nearestName(name, guard)).toBe(meant);
  });

  it.each([["t"], ["time"], ["colour"], [""], ["maxMemoryBytes"]])("%j → nothing", (name) => {
    expect(nearestName(name, guard)).toBeUndefined();
  });

  it("prefers the closest of several", () => {
    expect(nearestName("path", ["paths", "pat", "bath"])).toBe("paths");
    expect(nearestName("levle", ["level", "levels"])).toBe("level");
  });
});
