import type { ChildProcess } from "node:child_process";
import type { Worker } from "node:worker_threads";
import { describe, expectTypeOf, it } from "vitest";
import {
  type ActiveGuard,
  type ActiveTimeGuard,
  currentSignal,
  type ExecutionTimeout,
  type GuardedCommand,
  type GuardedCommandResult,
  type MemGuard,
  type MemoryLimitExceeded,
  type MemRunContext,
  type ProgressTarget,
  progress,
  progressLoop,
  runGuardedCommand,
  runSync,
  type TimeGuard,
  type TimeRunContext,
  type TimeWatchHandle,
  type TimeWrapped,
  type WatchHandle,
  type WatchResult,
  type Wrapped,
} from "./index.js";

declare const time: TimeGuard;
declare const memory: MemGuard;

describe("run()", () => {
  it("resolves with the task's result, sync or async", () => {
    expectTypeOf(time.run(() => 42)).toEqualTypeOf<Promise<number>>();
    expectTypeOf(time.run(async () => "page")).toEqualTypeOf<Promise<string>>();
    expectTypeOf(memory.run(async () => [1n])).toEqualTypeOf<Promise<bigint[]>>();
    expectTypeOf(time.run(() => {})).toEqualTypeOf<Promise<void>>();
    // A nested promise is flattened, as `await` would.
    expectTypeOf(time.run(() => Promise.resolve(Promise.resolve(true)))).toEqualTypeOf<Promise<boolean>>();
  });

  it("gives a TimeGuard's task { signal, progress } and a MemGuard's task { signal }", () => {
    time.run((context) => {
      expectTypeOf(context).toEqualTypeOf<TimeRunContext>();
      expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>();
      expectTypeOf(context.progress).toEqualTypeOf<() => void>();
    });
    memory.run((context) => {
      expectTypeOf(context).toEqualTypeOf<MemRunContext>();
      // @ts-expect-error: a memory limit cannot be restarted
      context.progress();
    });
  });
});

describe("wrap()", () => {
  it("keeps an async function's parameters and resolved type", () => {
    const fetchAll = time.wrap(async (urls: string[], retries?: number) =>
      urls.map((url) => url.length + (retries ?? 0)),
    );
    expectTypeOf(fetchAll).parameters.toEqualTypeOf<[urls: string[], retries?: number]>();
    expectTypeOf(fetchAll).returns.toEqualTypeOf<Promise<number[]>>();
    expectTypeOf(fetchAll).toEqualTypeOf<
      TimeWrapped<[urls: string[], retries?: number], Promise<number[]>>
    >();
    // @ts-expect-error: the first argument is a string[]
    fetchAll("https://example.org/");
    // @ts-expect-error: too many arguments
    fetchAll([], 1, 2);
  });

  it("turns a sync function into one returning a promise of its result", () => {
    const parse = memory.wrap((text: string): { n: number } => JSON.parse(text));
    expectTypeOf(parse).parameters.toEqualTypeOf<[text: string]>();
    expectTypeOf(parse).returns.toEqualTypeOf<Promise<{ n: number }>>();
    expectTypeOf(parse).toEqualTypeOf<Wrapped<[text: string], { n: number }, MemGuard>>();
  });

  it("exposes .guard, and .progress() only for a TimeGuard", () => {
    const timed = time.wrap(() => 1);
    expectTypeOf(timed.guard).toEqualTypeOf<TimeGuard>();
    expectTypeOf(timed.progress).toEqualTypeOf<() => void>();
    const sized = memory.wrap(() => 1);
    expectTypeOf(sized.guard).toEqualTypeOf<MemGuard>();
    // @ts-expect-error: no progress() on a MemGuard's wrapped function
    sized.progress();
  });
});

describe("enter()", () => {
  it("returns a disposable handle, with progress() only for a TimeGuard", () => {
    expectTypeOf(time.enter()).toEqualTypeOf<ActiveTimeGuard>();
    expectTypeOf(memory.enter()).toEqualTypeOf<ActiveGuard>();
    expectTypeOf<ActiveGuard>().toExtend<Disposable>();
    expectTypeOf<ActiveTimeGuard["signal"]>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<ActiveTimeGuard["progress"]>().toEqualTypeOf<() => void>();
    expectTypeOf<ActiveGuard>().not.toHaveProperty("progress");
  });
});

describe("watch()", () => {
  it("accepts a ChildProcess, a Worker or a { pid }", () => {
    expectTypeOf(time.watch).toBeCallableWith({} as ChildProcess);
    expectTypeOf(time.watch).toBeCallableWith({} as Worker);
    expectTypeOf(memory.watch).toBeCallableWith({ pid: 1234 }, { signal: AbortSignal.timeout(1) });
    // @ts-expect-error: a pid is a number
    time.watch({ pid: "1234" });
    // @ts-expect-error: a bare number is not a target
    time.watch(1234);
  });

  it("resolves with the exit and the guard's typed error", () => {
    const timed = time.watch({ pid: 1 });
    expectTypeOf(timed).toEqualTypeOf<TimeWatchHandle>();
    expectTypeOf(timed).resolves.toEqualTypeOf<WatchResult<ExecutionTimeout>>();
    expectTypeOf<WatchResult<ExecutionTimeout>>().toEqualTypeOf<{
      code: number | null;
      signal: string | null;
      error: ExecutionTimeout | null;
    }>();
    expectTypeOf(timed.close).toEqualTypeOf<() => Promise<void>>();
    expectTypeOf(timed.progress).toEqualTypeOf<() => void>();
    expectTypeOf(timed).toExtend<AsyncDisposable>();

    const sized = memory.watch({ pid: 1 });
    expectTypeOf(sized).toEqualTypeOf<WatchHandle<MemoryLimitExceeded>>();
    expectTypeOf(sized).resolves.toHaveProperty("error").toEqualTypeOf<MemoryLimitExceeded | null>();
    expectTypeOf(sized).not.toHaveProperty("progress");
  });
});

describe("module functions", () => {
  it("progress() and currentSignal()", () => {
    expectTypeOf(progress).toEqualTypeOf<() => void>();
    expectTypeOf(currentSignal).toEqualTypeOf<() => AbortSignal>();
  });

  it("progressLoop() yields the items' type, sync or async", () => {
    expectTypeOf(progressLoop([1, 2, 3])).toEqualTypeOf<Generator<number, void, undefined>>();
    expectTypeOf(progressLoop(new Set(["a"]))).toEqualTypeOf<Generator<string, void, undefined>>();
    async function* lines(): AsyncGenerator<string> {
      yield "line";
    }
    expectTypeOf(progressLoop(lines())).toEqualTypeOf<AsyncGenerator<string, void, undefined>>();
  });

  it("progressLoop() reports to anything with progress()", () => {
    expectTypeOf<TimeRunContext>().toExtend<ProgressTarget>();
    expectTypeOf<ActiveTimeGuard>().toExtend<ProgressTarget>();
    expectTypeOf<TimeWrapped<[], number>>().toExtend<ProgressTarget>();
    expectTypeOf<TimeWatchHandle>().toExtend<ProgressTarget>();
    // @ts-expect-error: a MemGuard's context has no progress()
    progressLoop([1], {} as MemRunContext);
    // @ts-expect-error: not iterable
    progressLoop(42);
  });

  it("runSync() returns the function's result itself, not a promise", () => {
    expectTypeOf(runSync(() => 42)).toEqualTypeOf<number>();
    expectTypeOf(runSync(() => ({ parsed: true }), { timeoutMs: 2_000 })).toEqualTypeOf<{
      parsed: boolean;
    }>();
    // @ts-expect-error: runSync's function takes no context
    runSync((context: TimeRunContext) => context);
  });

  it("runGuardedCommand() returns a promise of the result with kill()", () => {
    const command = runGuardedCommand("make", ["-j4"]);
    expectTypeOf(command).toEqualTypeOf<GuardedCommand>();
    expectTypeOf(command).resolves.toEqualTypeOf<GuardedCommandResult>();
    expectTypeOf(command.kill).toEqualTypeOf<(signal: NodeJS.Signals) => boolean>();
    // @ts-expect-error: not a signal name
    command.kill("SIGFOO");
    expectTypeOf(runGuardedCommand).toBeCallableWith("ls", ["-l"] as readonly string[]);
  });

  it("types the command's result", () => {
    expectTypeOf<GuardedCommandResult>().toEqualTypeOf<{
      exitCode: number;
      limit: "time" | "memory" | undefined;
      code: number | null;
      signal: NodeJS.Signals | null;
      pid: number | undefined;
      spawnError: NodeJS.ErrnoException | undefined;
    }>();
  });
});
