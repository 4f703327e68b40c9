import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { recordingLogger } from "@x/test-support/recording-logger";
import { describe, expect, it, vi } from "vitest";
import { busy, delay, gate } from "../test/helpers.js";
import { Activation } from "./activation.js";
import { ExecutionTimeout } from "./errors.js";
import { type InterruptEvent, timeGuard, type WarningEvent } from "./guard.js";

/** A fast guard for tests: 100 ms limit, 100 ms between levels, checked every 10 ms. */
/**
 * A guard with a short timeout. Its grace period is long unless a test sets one: a task that reacts to
 * level 0 must not meet level 2 because a loaded machine stalled the event loop past `timeout + 2·grace`
 * (levels fall due from the start, not from the level before; spec).
 */
function fastGuard(extra: Parameters<typeof timeGuard>[0] = {}) {
  const guard = timeGuard({ timeoutMs: 100, gracePeriodMs: 2_000, checkIntervalMs: 10, ...extra });
  const events: { at: number; event: InterruptEvent<ExecutionTimeout> }[] = [];
  const warnings: WarningEvent<ExecutionTimeout>[] = [];
  const started = performance.now();
  guard.on("interrupt", (event) => events.push({ at: performance.now() - started, event }));
  guard.on("warning", (event) => warnings.push(event));
  return { guard, events, warnings, started };
}

describe("TimeGuard.run", () => {
  it("resolves with the task's value and rejects with its error unchanged", async () => {
    const guard = timeGuard();
    await expect(guard.run(async () => 42)).resolves.toBe(42);
    await expect(guard.run(() => "sync")).resolves.toBe("sync");
    const failure = new Error("boom");
    await expect(guard.run(async () => Promise.reject(failure))).rejects.toBe(failure);
  });

  it("never throws synchronously: a synchronous throw and bad options reject", async () => {
    const guard = timeGuard();
    const failure = new TypeError("sync");
    const result = guard.run(() => {
      throw failure;
    });
    await expect(result).rejects.toBe(failure);
    await expect(guard.run(async () => 1, { signal: "nope" } as never)).rejects.toMatchObject({
      code: "ERR_X_GUARD_INVALID_OPTION",
    });
    await expect(guard.run(async () => 1, { timeout: 1 } as never)).rejects.toMatchObject({
      code: "ERR_X_GUARD_INVALID_OPTION",
    });
  });

  it("aborts the task's signal at the timeout with an ExecutionTimeout as reason", async () => {
    const { guard, events } = fastGuard();
    let signal!: AbortSignal;
    const started = performance.now();
    const abortedAfter = await guard.run(async (ctx) => {
      signal = ctx.signal;
      expect(signal.aborted).toBe(false);
      await once(signal, "abort");
      return performance.now() - started;
    });
    expect(abortedAfter).toBeGreaterThanOrEqual(99);
    expect(abortedAfter).toBeLessThan(1_000);
    expect(signal.reason).toBeInstanceOf(ExecutionTimeout);
    expect(signal.reason).toMatchObject({ code: "ERR_X_GUARD_TIMEOUT", level: 0, limitMs: 100 });
    expect(signal.reason.elapsedMs).toBeGreaterThanOrEqual(100);
    expect(events[0]!.event.error).toBe(signal.reason); // the level-0 error is the reason itself
  });

  it("rejects with the guard's error when the task passes its signal down (AbortError mapping)", async () => {
    const { guard } = fastGuard();
    const viaTimers = guard.run(({ signal }) => sleep(5_000, undefined, { signal }));
    await expect(viaTimers).rejects.toBeInstanceOf(ExecutionTimeout);
    const viaOnce = guard.run(({ signal }) => once(new EventTarget(), "never", { signal }));
    await expect(viaOnce).rejects.toBeInstanceOf(ExecutionTimeout);
    // an AbortError whose cause is not the reason stays as it is
    const other = new DOMException("other", "AbortError");
    const unrelated = guard.run(async ({ signal }) => {
      await once(signal, "abort");
      throw other;
    });
    await expect(unrelated).rejects.toBe(other);
  });

  it("escalates through levels 0, 1, 2 at timeout + n·grace, then sends nothing more", async () => {
    const { guard, events, warnings } = fastGuard({ gracePeriodMs: 100, waitForTask: true });
    const result = guard.run(async ({ signal }) => {
      await once(signal, "abort");
      await delay(450); // ignore the interrupt: the ladder goes on
      return "finished late";
    });
    await expect(result).resolves.toBe("finished late"); // waitForTask: run() settles with the task
    expect(events.map((e) => e.event.level)).toEqual([0, 1, 2]);
    events.forEach(({ at, event }, level) => {
      expect(event.error).toBeInstanceOf(ExecutionTimeout);
      expect(event.error.level).toBe(level);
      expect(event.error.elapsedMs).toBeGreaterThanOrEqual(100 + level * 100);
      expect(event.error.taskLeftRunning).toBe(false);
      expect(at).toBeGreaterThanOrEqual(99 + level * 100);
      expect(at).toBeLessThan(100 + level * 100 + 800);
    });
    expect(new Set(events.map((e) => e.event.error)).size).toBe(3);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe(2);
    expect(warnings[0]!.error).toBe(events[2]!.event.error);
    expect(warnings[0]!.message).toContain("nothing to our own process (allowProcessSignals is false)");
    expect(warnings[0]!.message).not.toContain("TERM signal");
  });

  it("rejects at level 2 with its error when the task ignores its signal, and leaves the task running", async () => {
    const { guard, events, warnings } = fastGuard({ gracePeriodMs: 100 });
    const task = gate();
    let finished = false;
    const result = guard.run(async () => {
      await task.opened; // ignores its signal
      finished = true;
      return "finished late";
    });
    const error = await result.then(
      () => expect.fail("run() waited for the task"),
      (reason: unknown) => reason as ExecutionTimeout,
    );
    expect(finished).toBe(false); // left running, as p-timeout leaves its promise
    expect(error).toBeInstanceOf(ExecutionTimeout);
    expect(error).toBe(events[2]!.event.error);
    expect(error).toMatchObject({ level: 2, taskLeftRunning: true });
    expect(error.elapsedMs).toBeGreaterThanOrEqual(300);
    expect(error.message).toContain("the task ignored its signal and is left running");
    expect(warnings[0]!.message).toContain("left running");
    // the activation ends when the task does; nothing more is sent meanwhile
    expect(guard.active.size).toBe(1);
    task.open();
    await vi.waitFor(() => expect(finished).toBe(true), { timeout: 5_000 });
    await delay(0);
    expect(guard.active.size).toBe(0);
    expect(events.map((e) => e.event.level)).toEqual([0, 1, 2]);
  });

  it("a task that settles before level 2 settles run() as it did, after it ignored level 0", async () => {
    const { guard, events } = fastGuard({ gracePeriodMs: 5_000 });
    const result = guard.run(async ({ signal }) => {
      await once(signal, "abort");
      await delay(50); // cleaning up after the interrupt, within the grace period
      return "cleaned up";
    });
    await expect(result).resolves.toBe("cleaned up");
    expect(events.map((e) => e.event.level)).toEqual([0]);
  });

  it("wrapped calls reject at level 2 too, unless waitForTask", async () => {
    const first = gate();
    const wrapped = timeGuard({ timeoutMs: 20, gracePeriodMs: 20 }).wrap(async () => {
      await first.opened;
      return "late";
    });
    await expect(wrapped()).rejects.toMatchObject({ level: 2, taskLeftRunning: true });
    first.open();
    const second = gate();
    const waiting = timeGuard({ timeoutMs: 20, gracePeriodMs: 20, waitForTask: true }).wrap(async () => {
      await second.opened;
      return "late";
    });
    waiting.guard.once("warning", () => second.open()); // level 2 has passed: now the task ends
    await expect(waiting()).resolves.toBe("late");
  });

  it("does not act synchronously: even timeout 0 starts the task with a live signal", async () => {
    const { guard, events } = fastGuard({ timeoutMs: 0 });
    const seen: boolean[] = [];
    const result = guard.run(async ({ signal }) => {
      seen.push(signal.aborted);
      await Promise.resolve();
      seen.push(signal.aborted);
      await once(signal, "abort");
    });
    expect(events).toHaveLength(0);
    await result;
    expect(seen).toEqual([false, false]);
    expect(events[0]!.event.level).toBe(0);
  });

  it("lets a task that catches the interrupt resolve normally (as in Resiliparse)", async () => {
    const { guard } = fastGuard();
    const result = await guard.run(async ({ signal }) => {
      try {
        await sleep(5_000, undefined, { signal });
        return "not reached";
      } catch (error) {
        if (error instanceof Error && error.cause instanceof ExecutionTimeout) return "timed out";
        throw error;
      }
    });
    expect(result).toBe("timed out");
  });

  it("restarts on progress(): no level 0 earlier than timeout after the last call", async () => {
    const { guard, events } = fastGuard();
    const result = await guard.run(async ({ signal, progress }) => {
      for (let i = 0; i < 8; i++) {
        await delay(40);
        progress();
      }
      return signal.aborted;
    });
    expect(result).toBe(false);
    expect(events).toHaveLength(0);
  });

  it("resets the ladder on progress: a new full timeout, then level 0 again; the signal stays aborted", async () => {
    const { guard, events } = fastGuard({ gracePeriodMs: 200 });
    let firstReason: unknown;
    await guard.run(async ({ signal, progress }) => {
      await once(signal, "abort");
      firstReason = signal.reason;
      const restarted = performance.now();
      progress();
      await new Promise<void>((resolve) => guard.once("interrupt", () => resolve()));
      expect(performance.now() - restarted).toBeGreaterThanOrEqual(99);
      expect(signal.reason).toBe(firstReason);
    });
    expect(events.map((e) => e.event.level)).toEqual([0, 0]);
    expect(events[1]!.event.error).not.toBe(firstReason);
  });

  it("ignores progress() after level 2", async () => {
    const { guard, events } = fastGuard({ gracePeriodMs: 10, waitForTask: true });
    await guard.run(async ({ progress }) => {
      await new Promise<void>((resolve) => guard.on("warning", () => resolve()));
      progress();
      await delay(250);
    });
    expect(events.map((e) => e.event.level)).toEqual([0, 1, 2]);
  });

  it("measures each level from the restart: a late check sends every level that is due", async () => {
    const { guard, events } = fastGuard({ timeoutMs: 50, gracePeriodMs: 50, waitForTask: true });
    await guard.run(async ({ signal }) => {
      busy(260); // the event loop is stuck past all three deadlines
      await once(signal, "abort");
      await delay(20);
    });
    expect(events.map((e) => e.event.level)).toEqual([0, 1, 2]);
    const spread = events[2]!.at - events[0]!.at;
    expect(spread).toBeLessThan(50); // sent at the same check, not pushed back by level 0's lateness
    events.forEach(({ event }, level) => {
      expect(event.error.elapsedMs).toBeGreaterThanOrEqual(50 + level * 50);
    });
  });

  it("aborts with an external signal's reason: no ladder, no event", async () => {
    const { guard, events } = fastGuard({ timeoutMs: 10_000 });
    const controller = new AbortController();
    const reason = new Error("caller gave up");
    const result = guard.run(({ signal }) => sleep(5_000, undefined, { signal }), {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(reason), 20);
    await expect(result).rejects.toBe(reason);
    expect(events).toHaveLength(0);
    // an already aborted signal aborts the task at once
    await expect(
      guard.run(({ signal }) => signal.reason, { signal: AbortSignal.abort("early") }),
    ).resolves.toBe("early");
  });

  it("with interruptType exception, levels 1 and 2 are events only", async () => {
    const listener = vi.fn();
    process.on("SIGINT", listener);
    try {
      const { guard, events, warnings } = fastGuard({
        interruptType: "exception",
        gracePeriodMs: 30,
        waitForTask: true,
      });
      await guard.run(async ({ signal }) => {
        // listening from the start: on a loaded machine levels 1 and 2 may come before the abort is seen
        const warned = once(guard, "warning");
        await once(signal, "abort");
        await warned;
      });
      expect(events.map((e) => e.event.level)).toEqual([0, 1, 2]);
      expect(events.map((e) => e.event.action)).toEqual([
        "aborted the signal",
        expect.stringContaining("nothing more"),
        expect.stringContaining("nothing more"),
      ]);
      expect(warnings[0]!.message).toContain("nothing more");
      expect(listener).not.toHaveBeenCalled();
    } finally {
      process.off("SIGINT", listener);
    }
  });

  it("never signals our own process unless allowProcessSignals", async () => {
    const listener = vi.fn();
    process.on("SIGINT", listener);
    process.on("SIGTERM", listener);
    try {
      const { guard, events } = fastGuard({
        interruptType: "signal",
        gracePeriodMs: 30,
        sendKill: true,
        waitForTask: true,
      });
      await guard.run(async () => {
        await new Promise<void>((resolve) => guard.on("warning", () => resolve()));
      });
      expect(events.map((e) => e.event.action)).toEqual([
        "aborted the signal; sent nothing to our own process (allowProcessSignals is false)",
        "sent nothing to our own process (allowProcessSignals is false)",
        "sent nothing to our own process (allowProcessSignals is false)",
      ]);
      await delay(50);
      expect(listener).not.toHaveBeenCalled();
    } finally {
      process.off("SIGINT", listener);
      process.off("SIGTERM", listener);
    }
  });

  it("catches and logs a listener's exception; the ladder goes on and nothing crashes", async () => {
    const { logger, messages } = recordingLogger();
    const { guard, events } = fastGuard({ gracePeriodMs: 30, logger, waitForTask: true });
    guard.prependListener("interrupt", () => {
      throw new Error("listener bug");
    });
    guard.on("interrupt", async () => {
      throw new Error("async listener bug");
    });
    await guard.run(async () => {
      await new Promise<void>((resolve) => guard.on("warning", () => resolve()));
    });
    await delay(10);
    expect(events.map((e) => e.event.level)).toEqual([0, 1, 2]);
    expect(messages("error")).toEqual(Array(6).fill("process-guard: an event listener threw"));
  });

  it("ends at once when the task settles: no action, no event, the signal never aborts", async () => {
    const { guard, events } = fastGuard({ timeoutMs: 30 });
    let signal!: AbortSignal;
    await guard.run(({ signal: s }) => {
      signal = s;
      return "quick";
    });
    expect(guard.active.size).toBe(0);
    await delay(150);
    expect(signal.aborted).toBe(false);
    expect(events).toHaveLength(0);
  });
});

describe("failing escalation steps", () => {
  it("logs a step that throws and goes on with the ladder", async () => {
    const { logger, messages, records } = recordingLogger();
    const { guard, events } = fastGuard({ gracePeriodMs: 20, logger });
    const target = {
      act: () => {
        throw new Error("step bug");
      },
      sampler: () => () => 0,
    };
    const activation = new Activation(guard, {
      target,
      parent: undefined,
      onExternal: "close",
      ownProcess: false,
    });
    await once(guard, "warning");
    activation.end();
    expect(events.map((e) => [e.event.level, e.event.action])).toEqual([
      [0, "nothing (it failed: step bug)"],
      [1, "nothing (it failed: step bug)"],
      [2, "nothing (it failed: step bug)"],
    ]);
    expect(messages("error")).toEqual([
      "process-guard: level 0 failed",
      "process-guard: level 1 failed",
      "process-guard: level 2 failed",
    ]);
    // the step's level is `escalation`: a pino logger's own `level` is the line's severity
    const steps = records.filter((r) => r.level === "debug" && r.msg.startsWith("process-guard: level"));
    expect(steps.map((r) => [r.fields.escalation, Object.hasOwn(r.fields, "level")])).toEqual([
      [0, false],
      [1, false],
      [2, false],
    ]);
  });
});

describe("on time, whatever checkIntervalMs is", () => {
  // A check interval far beyond every limit below: a guard that waited for its check would act after 10 s.
  const rarely = { checkIntervalMs: 10_000 };

  it("interrupts at the deadline, not at the next check", async () => {
    const { guard, events } = fastGuard({ timeoutMs: 100, ...rarely });
    const started = performance.now();
    const abortedAfter = await guard.run(async ({ signal }) => {
      await once(signal, "abort");
      return performance.now() - started;
    });
    expect(abortedAfter).toBeGreaterThanOrEqual(99);
    expect(abortedAfter).toBeLessThan(1_000); // a few ms on an idle machine; generous for a loaded one
    expect(events[0]!.event.error.elapsedMs).toBeGreaterThanOrEqual(100);
    expect(events[0]!.event.error.elapsedMs).toBeLessThan(1_000);
  });

  it("sends levels 1 and 2 on time too, at timeout + n·grace", async () => {
    const { guard, events } = fastGuard({ timeoutMs: 100, gracePeriodMs: 150, ...rarely, waitForTask: true });
    await guard.run(async () => {
      await once(guard, "warning");
    });
    expect(events.map((e) => e.event.level)).toEqual([0, 1, 2]);
    events.forEach(({ at, event }, level) => {
      expect(at).toBeGreaterThanOrEqual(99 + level * 150);
      expect(at).toBeLessThan(100 + level * 150 + 1_000);
      expect(event.error.elapsedMs).toBeGreaterThanOrEqual(100 + level * 150);
    });
  });

  it("progress() postpones the interrupt to timeout after the last call", async () => {
    const { guard } = fastGuard({ timeoutMs: 150, ...rarely });
    let lastProgress = 0;
    const lateBy = await guard.run(async ({ signal, progress }) => {
      for (let i = 0; i < 6; i++) {
        await delay(50);
        expect(signal.aborted).toBe(false);
        progress();
        lastProgress = performance.now();
      }
      await once(signal, "abort");
      return performance.now() - lastProgress;
    });
    expect(lateBy).toBeGreaterThanOrEqual(149);
    expect(lateBy).toBeLessThan(1_000);
  });

  it("progress() arms no timer: the deadline is re-queued once, when the old one comes due", async () => {
    const { guard } = fastGuard({ timeoutMs: 100, ...rarely });
    const spy = vi.spyOn(globalThis, "setTimeout");
    try {
      await guard.run(async ({ signal, progress }) => {
        const started = performance.now();
        await delay(60);
        const before = spy.mock.calls.length;
        for (let i = 0; i < 10_000; i++) progress(); // the deadline moves from 100 ms to about 160 ms
        expect(spy.mock.calls.length).toBe(before); // no timer per progress() call
        await once(signal, "abort");
        expect(performance.now() - started).toBeGreaterThanOrEqual(159);
      });
    } finally {
      spy.mockRestore();
    }
  });

  it("after an interrupt, progress() brings the next level 0 forward from the far-off level 1", async () => {
    const { guard, events } = fastGuard({ timeoutMs: 100, gracePeriodMs: 60_000, ...rarely });
    const restartedFor = await guard.run(async ({ signal, progress }) => {
      await once(signal, "abort");
      const restarted = performance.now();
      progress(); // the armed timer is for level 1, a minute away: it must be replaced
      await once(guard, "interrupt");
      return performance.now() - restarted;
    });
    expect(events.map((e) => e.event.level)).toEqual([0, 0]);
    expect(restartedFor).toBeGreaterThanOrEqual(99);
    expect(restartedFor).toBeLessThan(1_000);
  });

  it("ends without leaving a timer: nothing fires after the task settled", async () => {
    const { guard, events } = fastGuard({ timeoutMs: 50, ...rarely });
    await guard.run(async () => "quick");
    await delay(120);
    expect(events).toHaveLength(0);
  });
});

describe("timers", () => {
  it("uses its own timers, which fake timers control", async () => {
    vi.useFakeTimers();
    try {
      const guard = timeGuard({ timeoutMs: 30_000, gracePeriodMs: 60_000, checkIntervalMs: 1_000 });
      const levels: number[] = [];
      guard.on("interrupt", ({ level }) => levels.push(level));
      const result = guard.run(({ signal }) => once(signal, "abort").then(() => signal.reason));
      await vi.advanceTimersByTimeAsync(29_000);
      expect(levels).toEqual([]);
      await vi.advanceTimersByTimeAsync(2_000);
      expect(levels).toEqual([0]);
      await expect(result).resolves.toBeInstanceOf(ExecutionTimeout);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("concurrency and nesting", () => {
  it("runs any number of activations of one guard at once, each with its own clock", async () => {
    const { guard, events } = fastGuard({ timeoutMs: 120 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        guard.run(async ({ signal, progress }) => {
          if (i % 2 === 0) {
            for (let n = 0; n < 5; n++) {
              await delay(40);
              progress();
            }
            return signal.aborted ? "aborted" : "ok";
          }
          await once(signal, "abort");
          return "interrupted";
        }),
      ),
    );
    expect(results.filter((r) => r === "ok")).toHaveLength(25);
    expect(results.filter((r) => r === "interrupted")).toHaveLength(25);
    expect(events.filter((e) => e.event.level === 0)).toHaveLength(25);
    expect(guard.active.size).toBe(0);
  });

  it("links a nested activation to the enclosing one: it aborts with the outer error, without its own event", async () => {
    const outer = fastGuard({ timeoutMs: 60 });
    const inner = fastGuard({ timeoutMs: 10_000 });
    let innerSignal!: AbortSignal;
    const result = outer.guard.run(() =>
      inner.guard.run(async ({ signal }) => {
        innerSignal = signal;
        await once(signal, "abort");
        return signal.reason;
      }),
    );
    const reason = await result;
    expect(reason).toBeInstanceOf(ExecutionTimeout);
    expect(reason).toBe(outer.events[0]!.event.error);
    expect(inner.events).toHaveLength(0);
    expect(innerSignal.reason).toBe(reason);
  });

  it("nests the same guard and recursion of a wrapped function", async () => {
    const guard = timeGuard({ timeoutMs: 10_000, checkIntervalMs: 10 });
    const depth = guard.wrap(
      async (n: number): Promise<number> => (n === 0 ? guard.active.size : depth(n - 1)),
    );
    await expect(depth(5)).resolves.toBe(6);
    expect(guard.active.size).toBe(0);
  });

  it("removes the link when the inner activation ends", async () => {
    const outer = fastGuard({ timeoutMs: 80 });
    const inner = timeGuard({ timeoutMs: 10_000 });
    let innerSignal!: AbortSignal;
    await outer.guard.run(async ({ signal }) => {
      await inner.run(async ({ signal: s }) => {
        innerSignal = s;
      });
      await once(signal, "abort");
    });
    expect(innerSignal.aborted).toBe(false);
  });
});
