import { spawn } from "node:child_process";
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { recordingLogger } from "@x/test-support/recording-logger";
import { describe, expect, it } from "vitest";
import { cleanupAfterTest, delay, gate, signalLogger, startLogger } from "../test/helpers.js";
import { Activation } from "./activation.js";
import { MemoryLimitExceeded } from "./errors.js";
import { type InterruptEvent, memGuard } from "./guard.js";
import type { MemGuardOptions } from "./options.js";
import { isAlive, ProcessGone, pgidOf, rssOf } from "./process-info.js";
import { treeRssOf } from "./process-tree.js";
import type { Target } from "./targets.js";

/** A MemGuard whose activation reads scripted samples: `set(bytes)` changes what the next sample sees. */
function scripted(options: MemGuardOptions, first: number) {
  const guard = memGuard({ checkIntervalMs: 10, ...options });
  let current: number | Error = first;
  let samples = 0;
  const events: { at: number; event: InterruptEvent<MemoryLimitExceeded> }[] = [];
  const started = performance.now();
  guard.on("interrupt", (event) => events.push({ at: performance.now() - started, event }));
  const target: Target = {
    act: (level) => `level ${level} taken`,
    sampler: () => () => {
      samples++;
      if (current instanceof Error) throw current;
      return current;
    },
  };
  const activation = new Activation(guard, {
    target,
    parent: undefined,
    onExternal: "close",
    ownProcess: false,
  });
  return {
    guard,
    activation,
    events,
    started,
    set: (value: number | Error) => {
      current = value;
    },
    samples: () => samples,
  };
}

describe("MemGuard escalation", () => {
  it("starts the clock at the first over sample: levels at grace, grace + secondary, grace + 2·secondary", async () => {
    const s = scripted({ maxMemoryBytes: 1_000, gracePeriodMs: 60, secondaryGracePeriodMs: 60 }, 500);
    await delay(40);
    expect(s.events).toHaveLength(0);
    const over = performance.now() - s.started;
    s.set(1_500);
    await delay(300);
    s.activation.end();
    expect(s.events.map((e) => e.event.level)).toEqual([0, 1, 2]);
    s.events.forEach(({ at, event }, level) => {
      expect(at - over).toBeGreaterThanOrEqual(60 + level * 60 - 1);
      expect(at - over).toBeLessThan(60 + level * 60 + 800);
      expect(event.error).toMatchObject({ level, limitBytes: 1_000, observedBytes: 1_500, metric: "rss" });
    });
  });

  it("treats a sample equal to the limit as neither over nor under; an under sample resets clock and ladder", async () => {
    const s = scripted({ maxMemoryBytes: 1_000, gracePeriodMs: 50, secondaryGracePeriodMs: 80 }, 1_001);
    await once(s.guard, "interrupt"); // level 0
    s.set(1_000); // equal: the ladder goes on
    await once(s.guard, "interrupt"); // level 1
    s.set(999); // under: reset
    await delay(150);
    expect(s.events.map((e) => e.event.level)).toEqual([0, 1]);
    s.set(2_000); // a new excess starts at level 0 again
    await once(s.guard, "interrupt");
    s.activation.end();
    expect(s.events.map((e) => e.event.level)).toEqual([0, 1, 0]);
    expect(s.events[2]!.event.error.observedBytes).toBe(2_000);
  });

  it("does not fire on a sample equal to the limit", async () => {
    const s = scripted({ maxMemoryBytes: 1_000 }, 1_000);
    await delay(80);
    s.activation.end();
    expect(s.events).toHaveLength(0);
  });

  it("with absolute: false, limits to the first sample (the baseline) plus maxMemoryBytes", async () => {
    const s = scripted({ maxMemoryBytes: 100, absolute: false }, 500);
    s.set(600);
    await delay(50);
    expect(s.events).toHaveLength(0);
    s.set(601);
    const [event] = (await once(s.guard, "interrupt")) as [InterruptEvent<MemoryLimitExceeded>];
    s.activation.end();
    expect(event.error).toMatchObject({ limitBytes: 600, observedBytes: 601 });
  });

  it("stops sampling after level 2", async () => {
    const s = scripted({ maxMemoryBytes: 0, secondaryGracePeriodMs: 10 }, 1);
    await once(s.guard, "warning");
    const after = s.samples();
    await delay(80);
    expect(s.samples()).toBe(after);
    expect(s.activation.ended).toBe(false);
    s.activation.end();
  });

  it("logs a failed sample at warn and skips it; a gone target ends the activation", async () => {
    const { logger, messages } = recordingLogger();
    const s = scripted({ maxMemoryBytes: 1_000, logger }, 1);
    s.set(new Error("EIO"));
    await delay(50);
    const warnings = messages("warn");
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toContain("skipped");
    expect(s.activation.ended).toBe(false);
    s.set(2_000);
    await once(s.guard, "interrupt");
    s.set(new ProcessGone(12345));
    await delay(50);
    expect(s.activation.ended).toBe(true);
  });
});

describe("MemGuard in-process", () => {
  it("aborts with MemoryLimitExceeded carrying limitBytes, observedBytes and metric (rss by default)", async () => {
    const guard = memGuard({ maxMemoryBytes: 1024, checkIntervalMs: 10 });
    const reason = await guard.run(async ({ signal }) => {
      await once(signal, "abort");
      return signal.reason;
    });
    expect(reason).toBeInstanceOf(MemoryLimitExceeded);
    expect(reason).toMatchObject({ code: "ERR_X_GUARD_MEMORY", level: 0, limitBytes: 1024, metric: "rss" });
    expect(reason.observedBytes).toBeGreaterThan(10 * 1024 * 1024);
  });

  it("rejects run() at level 2 when the task ignores its signal, leaving it running", async () => {
    const guard = memGuard({ maxMemoryBytes: 1024, secondaryGracePeriodMs: 20, checkIntervalMs: 10 });
    const task = gate();
    let finished = false;
    const error = await guard
      .run(async () => {
        await task.opened; // ignores its signal
        finished = true;
      })
      .catch((reason: unknown) => reason);
    task.open();
    expect(finished).toBe(false);
    expect(error).toBeInstanceOf(MemoryLimitExceeded);
    expect(error).toMatchObject({ level: 2, taskLeftRunning: true });
  });

  it("measures the heap with metric heap, and never acts inside run() itself", async () => {
    const guard = memGuard({ maxMemoryBytes: 1, metric: "heap", checkIntervalMs: 10_000 });
    let seen: boolean | undefined;
    const result = guard.run(async ({ signal }) => {
      seen = signal.aborted;
      await once(signal, "abort");
      return signal.reason;
    });
    expect(seen).toBe(false);
    const reason = await result;
    expect(reason).toMatchObject({ metric: "heap", level: 0 });
    expect(reason.observedBytes).toBeLessThan(process.memoryUsage().rss);
  });

  it("uses the usage at the start as baseline with absolute: false", async () => {
    const guard = memGuard({
      maxMemoryBytes: 32 * 1024 ** 2,
      absolute: false,
      checkIntervalMs: 10,
      metric: "rss",
    });
    const held: Buffer[] = [];
    const reason = await guard.run(async ({ signal }) => {
      while (!signal.aborted) {
        held.push(Buffer.alloc(8 * 1024 * 1024, 1));
        await delay(5);
      }
      return signal.reason as MemoryLimitExceeded;
    });
    held.length = 0;
    expect(reason.observedBytes).toBeGreaterThan(reason.limitBytes);
    expect(reason.limitBytes).toBeGreaterThan(32 * 1024 * 1024);
  });
});

describe("memory measurement", () => {
  it("reads a pid's RSS and its tree (descendants included), from /proc and through ps and pidusage", async () => {
    const logged = startLogger(["--grandchild", "--allocate-mb", "64"], { detached: true });
    const child = logged.child;
    cleanupAfterTest(child);
    await logged.waitFor((e) => e.ready === true && e.pid === child.pid);
    await logged.waitFor((e) => e.ready === true && e.pid !== child.pid);
    const pid = child.pid!;
    const rss = (await rssOf(pid)) as number;
    const tree = (await treeRssOf(pid)) as number;
    expect(rss).toBeGreaterThan(64 * 1024 * 1024);
    expect(tree).toBeGreaterThan(rss + 10 * 1024 * 1024); // the grandchild is a whole Node process
    const portableRss = await rssOf(pid, false);
    const portableTree = await treeRssOf(pid, false);
    expect(Math.abs(portableRss - rss)).toBeLessThan(16 * 1024 * 1024);
    expect(Math.abs(portableTree - tree)).toBeLessThan(32 * 1024 * 1024);
    expect(await pgidOf(pid)).toBe(pid);
    expect(await pgidOf(pid, false)).toBe(pid);
    expect(isAlive(pid)).toBe(true);
  });

  it("reports a process that is gone", async () => {
    const done = spawn(process.execPath, ["-e", ""]);
    await once(done, "exit");
    const pid = done.pid!;
    expect(isAlive(pid)).toBe(false);
    expect(() => rssOf(pid)).toThrow(ProcessGone);
    expect(() => treeRssOf(pid)).toThrow(ProcessGone);
    expect(() => pgidOf(pid)).toThrow(ProcessGone);
    await expect(pgidOf(pid, false)).rejects.toBeInstanceOf(ProcessGone);
    await expect(rssOf(pid, false)).rejects.toBeInstanceOf(ProcessGone);
  });

  it("refuses heap for a child or pid, and for a Worker without getHeapStatistics, with ERR_X_GUARD_UNSUPPORTED", async () => {
    const guard = memGuard({ maxMemoryBytes: 1024, metric: "heap" });
    const logged = startLogger();
    const child = logged.child;
    cleanupAfterTest(child);
    expect(() => guard.watch(child)).toThrow(expect.objectContaining({ code: "ERR_X_GUARD_UNSUPPORTED" }));
    expect(() => guard.watch({ pid: child.pid! })).toThrow(
      expect.objectContaining({ code: "ERR_X_GUARD_UNSUPPORTED" }),
    );
    const worker = new Worker("setTimeout(() => {}, 200)", { eval: true });
    if (typeof (worker as { getHeapStatistics?: unknown }).getHeapStatistics !== "function") {
      expect(() => guard.watch(worker)).toThrow(expect.objectContaining({ code: "ERR_X_GUARD_UNSUPPORTED" }));
    }
    await worker.terminate();
  });

  it("stops a child whose process tree grows over the limit (metric tree)", async () => {
    const guard = memGuard({ maxMemoryBytes: 200 * 1024 ** 2, metric: "tree", checkIntervalMs: 20 });
    const child = spawn(
      process.execPath,
      [signalLogger, "--grandchild", "--allocate-mb", "160", "--exit-on", "SIGINT"],
      {
        detached: true,
        stdio: "ignore",
      },
    );
    cleanupAfterTest(child);
    const result = await guard.watch(child);
    expect(result.code).toBe(3);
    expect(result.error).toMatchObject({ metric: "tree", level: 0 });
    expect(result.error!.observedBytes).toBeGreaterThan(200 * 1024 * 1024);
  });
});
