import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { delay } from "../test/helpers.js";
import { currentSignal, progress } from "./context.js";
import { ExecutionTimeout, GuardError } from "./errors.js";
import { memGuard, timeGuard } from "./guard.js";
import { progressLoop } from "./progress-loop.js";

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("wrap", () => {
  it("runs each call under its own activation, with the call's arguments and this", async () => {
    const guard = timeGuard({ timeoutMs: 10_000 });
    const object = {
      factor: 3,
      times: guard.wrap(function (this: { factor: number }, n: number) {
        return n * this.factor;
      }),
    };
    const result = object.times(5);
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toBe(15);
    expect(object.times.guard).toBe(guard);
    expect(object.times.name).toBe("");
    const named = guard.wrap(async function fetchPage() {});
    expect(named.name).toBe("fetchPage");
  });

  it("gives a call its signal through currentSignal() and restarts it through progress()", async () => {
    const guard = timeGuard({ timeoutMs: 100, gracePeriodMs: 100, checkIntervalMs: 10 });
    const events: number[] = [];
    guard.on("interrupt", ({ level }) => events.push(level));
    const work = guard.wrap(async (steps: number) => {
      const signal = currentSignal();
      for (let i = 0; i < steps; i++) {
        await delay(40);
        progress();
      }
      return signal.aborted;
    });
    await expect(work(6)).resolves.toBe(false);
    expect(events).toEqual([]);
    const slow = guard.wrap(async () => {
      await once(currentSignal(), "abort");
      return currentSignal().reason;
    });
    await expect(slow()).resolves.toBeInstanceOf(ExecutionTimeout);
  });

  it("f.progress() restarts the call's activation inside it and every active one outside", async () => {
    const guard = timeGuard({ timeoutMs: 100, gracePeriodMs: 100, checkIntervalMs: 10 });
    const events: number[] = [];
    guard.on("interrupt", ({ level }) => events.push(level));
    const inside = guard.wrap(async () => {
      for (let i = 0; i < 6; i++) {
        await delay(40);
        inside.progress();
      }
    });
    await inside();
    expect(events).toEqual([]);

    const outside = guard.wrap(async () => delay(260));
    const calls = [outside(), outside()];
    const timer = setInterval(() => outside.progress(), 40);
    await Promise.all(calls);
    clearInterval(timer);
    expect(events).toEqual([]);
  });
});

describe("enter", () => {
  it("makes the activation current for the rest of the function; dispose ends it and is idempotent", async () => {
    const guard = timeGuard({ timeoutMs: 80, gracePeriodMs: 100, checkIntervalMs: 10 });
    const events: number[] = [];
    guard.on("interrupt", ({ level }) => events.push(level));
    const block = async () => {
      using active = guard.enter();
      expect(currentSignal()).toBe(active.signal);
      for (let i = 0; i < 5; i++) {
        await delay(30);
        progress();
      }
      active.progress();
      expect(guard.active.size).toBe(1);
      return active;
    };
    const active = await block();
    expect(guard.active.size).toBe(0);
    active[Symbol.dispose]();
    await delay(120);
    expect(events).toEqual([]);
    expect(active.signal.aborted).toBe(false);
  });

  it("restores the previous context on dispose; ended activations are invisible to progress()", () => {
    const guard = timeGuard({ timeoutMs: 10_000 });
    const outer = guard.enter();
    const inner = guard.enter();
    expect(currentSignal()).toBe(inner.signal);
    inner[Symbol.dispose]();
    expect(currentSignal()).toBe(outer.signal);
    outer[Symbol.dispose]();
    expect(caught(() => progress())).toMatchObject({ code: "ERR_X_GUARD_NO_CONTEXT" });
  });

  it("aborts the signal at the timeout and works for a MemGuard", async () => {
    const guard = memGuard({ maxMemoryBytes: 1, checkIntervalMs: 10 });
    using active = guard.enter();
    await once(active.signal, "abort");
    expect(active.signal.reason).toMatchObject({ code: "ERR_X_GUARD_MEMORY", level: 0 });
  });

  it("never keeps an undisposed activation's timers from letting the process exit", async () => {
    const { runTs } = await import("../test/helpers.js");
    const script = new URL("../test/fixtures/undisposed.ts", import.meta.url).pathname;
    const { code, stdout } = await runTs(script);
    expect(stdout.trim()).toBe("main done");
    expect(code).toBe(0);
  });
});

describe("a pending run() keeps the process alive until it settles", () => {
  const script = new URL("../test/fixtures/pending-run.ts", import.meta.url).pathname;

  it("rejects at level 2 when the task never settles, instead of a silent exit 13", async () => {
    const { runTs } = await import("../test/helpers.js");
    const { code, stdout } = await runTs(script, ["hung"]);
    expect(code).toBe(0);
    const outcome = JSON.parse(stdout);
    expect(outcome).toMatchObject({ name: "ExecutionTimeout", level: 2, taskLeftRunning: true });
    expect(outcome.ms).toBeGreaterThanOrEqual(199); // 100 ms + 2 × 50 ms
  });

  it("with waitForTask, waits for a task that settles on an unref'd timer", async () => {
    const { runTs } = await import("../test/helpers.js");
    const { code, stdout } = await runTs(script, ["late"]);
    expect(code).toBe(0);
    const outcome = JSON.parse(stdout);
    expect(outcome.value).toBe("settled with the task");
    expect(outcome.ms).toBeGreaterThanOrEqual(599);
  });
});

describe("progress() and currentSignal()", () => {
  it("throw ERR_X_GUARD_NO_CONTEXT outside any guard", () => {
    for (const fn of [progress, currentSignal]) {
      const error = caught(fn);
      expect(error).toBeInstanceOf(GuardError);
      expect(error).toMatchObject({ code: "ERR_X_GUARD_NO_CONTEXT" });
    }
  });

  it("restart only the innermost TimeGuard, skipping MemGuards; outer budgets keep running", async () => {
    const outer = timeGuard({ timeoutMs: 150, gracePeriodMs: 1_000, checkIntervalMs: 10 });
    const inner = timeGuard({ timeoutMs: 100, gracePeriodMs: 1_000, checkIntervalMs: 10 });
    const memory = memGuard({ maxMemoryBytes: Number.MAX_SAFE_INTEGER, checkIntervalMs: 10 });
    const seen: string[] = [];
    outer.on("interrupt", () => seen.push("outer"));
    inner.on("interrupt", () => seen.push("inner"));
    await outer.run(({ signal }) =>
      inner.run(() =>
        memory.run(async () => {
          for (let i = 0; i < 6; i++) {
            await delay(40);
            progress(); // reaches `inner` through the MemGuard
          }
          expect(signal.aborted).toBe(true);
        }),
      ),
    );
    expect(seen).toEqual(["outer"]);
  });

  it("cost well under a microsecond", () => {
    const guard = timeGuard({ timeoutMs: 10_000 });
    using _active = guard.enter();
    for (let i = 0; i < 100_000; i++) progress(); // warm-up
    const started = performance.now();
    for (let i = 0; i < 500_000; i++) progress();
    const perCall = ((performance.now() - started) * 1_000) / 500_000;
    expect(perCall).toBeLessThan(1);
  });
});

describe("progressLoop", () => {
  it("reports progress n times for n items, after each loop body", () => {
    const calls: string[] = [];
    const target = { progress: () => calls.push("progress") };
    for (const item of progressLoop(["a", "b", "c"], target)) calls.push(item);
    expect(calls).toEqual(["a", "progress", "b", "progress", "c", "progress"]);
  });

  it("iterates async iterables with for await", async () => {
    async function* source() {
      yield 1;
      yield 2;
    }
    const calls: unknown[] = [];
    for await (const item of progressLoop(source(), { progress: () => calls.push("p") })) calls.push(item);
    expect(calls).toEqual([1, "p", 2, "p"]);
  });

  it("uses progress() by default, so it keeps a guarded loop alive", async () => {
    const guard = timeGuard({ timeoutMs: 100, gracePeriodMs: 1_000, checkIntervalMs: 10 });
    const aborted = await guard.run(async ({ signal }) => {
      for (const _ of progressLoop(Array.from({ length: 6 }))) await delay(40);
      return signal.aborted;
    });
    expect(aborted).toBe(false);
  });

  it("accepts a run context, an enter() handle and a wrapped function as target", async () => {
    const guard = timeGuard({ timeoutMs: 10_000 });
    await guard.run((ctx) => [...progressLoop([1, 2], ctx)]);
    using active = guard.enter();
    expect([...progressLoop([1], active)]).toEqual([1]);
    const wrapped: { (): Promise<number[]>; progress(): void } = guard.wrap(() => [
      ...progressLoop([1], wrapped),
    ]);
    await expect(wrapped()).resolves.toEqual([1]);
  });

  it("throws ERR_X_GUARD_NO_CONTEXT outside a guard when the second item is requested", () => {
    const loop = progressLoop([1, 2, 3]);
    expect(loop.next()).toEqual({ value: 1, done: false });
    expect(caught(() => loop.next())).toMatchObject({ code: "ERR_X_GUARD_NO_CONTEXT" });
  });

  it("closes the source when the loop is left early", async () => {
    let closed = false;
    const source = {
      *[Symbol.iterator]() {
        try {
          yield 1;
          yield 2;
        } finally {
          closed = true;
        }
      },
    };
    for (const _ of progressLoop(source, { progress() {} })) break;
    expect(closed).toBe(true);

    let asyncClosed = false;
    async function* asyncSource() {
      try {
        yield 1;
        yield 2;
      } finally {
        asyncClosed = true;
      }
    }
    for await (const _ of progressLoop(asyncSource(), { progress() {} })) break;
    expect(asyncClosed).toBe(true);
  });
});
