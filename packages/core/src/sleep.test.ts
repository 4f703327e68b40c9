import { describe, expect, it } from "vitest";
import { sleep } from "./sleep.js";

describe("sleep", () => {
  it("waits at least the given time", async () => {
    const started = performance.now();
    await sleep(30);
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
  });

  it("rejects with the signal's reason when aborted while waiting", async () => {
    const controller = new AbortController();
    const reason = new Error("stop");
    const started = performance.now();
    const pending = sleep(60_000, { signal: controller.signal });
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("rejects at once for an already aborted signal", async () => {
    await expect(sleep(60_000, { signal: AbortSignal.abort("gone") })).rejects.toBe("gone");
  });

  it("treats a negative time as zero", async () => {
    await expect(sleep(-5)).resolves.toBeUndefined();
  });

  it("does not keep the process alive with ref: false", async () => {
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const script = `(${sleep.toString()})(60000, { ref: false }).then(() => console.log("woke"));`;
    const started = performance.now();
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "--eval", script]);
    expect(stdout).toBe("");
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});
