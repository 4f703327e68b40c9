import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { describe, expect, it, onTestFinished } from "vitest";
import { memGuard, timeGuard } from "../src/index.js";
import { delay, fixtures } from "./helpers.js";

/** Starts the worker fixture, terminated when the test finishes; `got` lists the messages it reports back. */
async function start(workerData: object = {}) {
  const worker = new Worker(`${fixtures}worker-logger.mjs`, { workerData });
  onTestFinished(async () => {
    await worker.terminate();
  });
  const got: { type: string; reason: string; level: number }[] = [];
  worker.on("message", (message) => {
    if (message.got) got.push(message.got);
  });
  await once(worker, "message");
  return { worker, got };
}

const fast = { timeoutMs: 100, gracePeriodMs: 100, checkIntervalMs: 10 };

describe("watch(worker)", () => {
  it("posts the interrupt message at level 0, then calls terminate() at level 1", async () => {
    const { worker, got } = await start();
    const guard = timeGuard(fast);
    const actions: string[] = [];
    guard.on("interrupt", (e) => actions.push(e.action));
    const result = await guard.watch(worker);
    expect(got).toEqual([{ type: "x-guard:interrupt", reason: "timeout", level: 0 }]);
    expect(actions).toEqual([
      "posted the x-guard:interrupt message to the worker",
      "called worker.terminate()",
    ]);
    expect(result).toMatchObject({ code: 1, signal: null });
    expect(result.error!.level).toBe(1);
  });

  it("with interruptType exception, posts at every level", async () => {
    const { worker, got } = await start();
    const guard = timeGuard({ ...fast, interruptType: "exception" });
    const handle = guard.watch(worker);
    await once(guard, "warning");
    await delay(30);
    expect(got.map((m) => m.level)).toEqual([0, 1, 2]);
    await worker.terminate();
    expect((await handle).error!.level).toBe(2);
  });

  it("with interruptType signal, terminates at level 0", async () => {
    const { worker, got } = await start();
    const result = await timeGuard({ ...fast, interruptType: "signal" }).watch(worker);
    expect(got).toEqual([]);
    expect(result.error!.level).toBe(0);
  });

  it("warns at level 2 that terminate() cannot stop a blocking native call, and sends no own signal", async () => {
    const { worker } = await start({ block: "native", seconds: 2 });
    const guard = timeGuard({ ...fast, gracePeriodMs: 50 });
    const [warning] = (await Promise.race([once(guard, "warning"), guard.watch(worker)])) as [
      { message: string },
    ];
    expect(warning.message).toContain("nothing to our own process (allowProcessSignals is false)");
    expect(warning.message).toContain("still alive: terminate() cannot stop a blocking native call");
  });

  it("guards a worker's memory (rss of our process) and posts the memory reason", async () => {
    const { worker, got } = await start();
    const guard = memGuard({ maxMemoryBytes: 1024, checkIntervalMs: 10, secondaryGracePeriodMs: 10_000 });
    const handle = guard.watch(worker);
    await once(guard, "interrupt");
    await delay(30);
    expect(got).toEqual([{ type: "x-guard:interrupt", reason: "memory", level: 0 }]);
    await handle.close();
    await worker.terminate();
    const result = await handle;
    expect(result.error).toMatchObject({ level: 0, metric: "rss" });
  });

  it("resolves at once for a worker that has exited", async () => {
    const worker = new Worker("", { eval: true });
    await once(worker, "exit");
    await expect(timeGuard(fast).watch(worker)).resolves.toEqual({ code: null, signal: null, error: null });
  });
});
