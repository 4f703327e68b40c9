import { describe, expect, it } from "vitest";
import { jsonLines as lines, runTs, startTs } from "./helpers.js";

const script = new URL("./fixtures/run-sync.ts", import.meta.url).pathname;

describe("runSync", () => {
  it("stops a synchronous busy loop with ExecutionTimeout, and the process stays healthy", async () => {
    const { code, stdout, stderr } = await runTs(script, ["busy"]);
    expect(stderr).toBe("");
    const [interrupted, after, again, listeners] = lines(stdout);
    expect(interrupted).toMatchObject({
      name: "ExecutionTimeout",
      code: "ERR_X_GUARD_TIMEOUT",
      guard: true,
      causeCode: "ERR_SCRIPT_EXECUTION_INTERRUPTED",
      level: 0,
    });
    expect(interrupted!.elapsedMs as number).toBeGreaterThanOrEqual(200);
    expect(interrupted!.limitMs).toBe(200);
    expect(after!.after as number).toBeLessThan(1_500);
    expect(again).toEqual({ value: "again" });
    expect(listeners).toEqual({ sigintListeners: 0 });
    expect(code).toBe(0); // exits normally when it runs out of work: the watchdog is unref'd
  });

  it("returns fn's value, lets fn's errors through unchanged, returns a promise unchanged; refuses nesting and workers", async () => {
    const { code, stdout } = await runTs(script, ["value"]);
    expect(lines(stdout)).toEqual([
      { value: 42 },
      { sameError: true },
      { samePromise: true },
      expect.objectContaining({ name: "GuardError", code: "ERR_X_GUARD_UNSUPPORTED" }),
      { inWorker: "ERR_X_GUARD_UNSUPPORTED" },
    ]);
    expect(code).toBe(0);
  });

  it("restarts the deadline on progress() inside fn", async () => {
    const { stdout } = await runTs(script, ["progress"]);
    expect(lines(stdout)).toEqual([{ value: "kept alive" }]);
  });

  it("stops fn when our RSS goes over maxMemoryBytes, with MemoryLimitExceeded", async () => {
    const { stdout, code } = await runTs(script, ["memory"]);
    const [result] = lines(stdout);
    expect(result).toMatchObject({
      name: "MemoryLimitExceeded",
      code: "ERR_X_GUARD_MEMORY",
      causeCode: "ERR_SCRIPT_EXECUTION_INTERRUPTED",
      level: 0,
    });
    expect(result!.observedBytes as number).toBeGreaterThan(result!.limitBytes as number);
    expect(code).toBe(0);
  });

  it("survives hundreds of calls whose deadline races the end of the call", async () => {
    const { stdout, code, signal } = await runTs(script, ["race"]);
    expect(signal).toBeNull();
    expect(code).toBe(0);
    const [counts] = lines(stdout) as [{ values: number; timeouts: number }];
    expect(counts.values + counts.timeouts).toBe(600);
  });

  it("never lets the watchdog's SIGINT reach 'SIGINT' listeners, and puts them back afterwards", async () => {
    const { stdout } = await runTs(script, ["listeners"]);
    const [result, after] = lines(stdout);
    expect(result).toMatchObject({ name: "ExecutionTimeout" });
    expect(after).toEqual({ heard: 0, sigintListeners: 1 });
  });

  it("lets a real Ctrl-C interrupt fn with Node's error and re-delivers it to the listeners", async () => {
    const run = startTs(script, ["ctrl-c-listener"]);
    const child = (await waitForSpinning(run)).child;
    child.kill("SIGINT");
    const { stdout, code } = await run.done;
    const [, result, after] = lines(stdout);
    expect(result).toMatchObject({ guard: false, code: "ERR_SCRIPT_EXECUTION_INTERRUPTED" });
    expect(after).toEqual({ heard: 1 });
    expect(code).toBe(0);
  });

  it("re-raises a real Ctrl-C when nobody listens, so the process ends as it would have", async () => {
    const run = startTs(script, ["ctrl-c"]);
    const child = (await waitForSpinning(run)).child;
    child.kill("SIGINT");
    const { signal } = await run.done;
    expect(signal).toBe("SIGINT");
  });
});

/** Starts a fixture run and resolves once it has printed `{"spinning":true}` (plus a little margin). */
function waitForSpinning(run: ReturnType<typeof startTs>) {
  return new Promise<{ child: import("node:child_process").ChildProcess }>((resolve) => {
    const { child } = run;
    let text = "";
    child.stdout!.on("data", (chunk) => {
      text += chunk;
      if (text.includes('"spinning"')) setTimeout(() => resolve({ child }), 150);
    });
  });
}
