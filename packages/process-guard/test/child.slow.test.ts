import { fork, spawn } from "node:child_process";
import { once } from "node:events";
import { recordingLogger } from "@x/test-support/recording-logger";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { ExecutionTimeout, type GuardError, type InterruptEvent, timeGuard } from "../src/index.js";
import { isAlive } from "../src/process-info.js";
import {
  cleanupAfterTest,
  delay,
  exited,
  goneWithin,
  type Logged,
  packageDir,
  signalLogger,
  startLogger,
} from "./helpers.js";

/** Starts the signal logger and waits until its handlers are installed; killed when the test finishes. */
async function ready(args: string[], options: Parameters<typeof startLogger>[1] = {}): Promise<Logged> {
  const logged = startLogger(args, options);
  cleanupAfterTest(logged.child);
  await logged.waitFor((e) => e.ready === true && e.pid === logged.child.pid);
  return logged;
}

/** A fork of the logger with an IPC channel; killed when the test finishes. */
async function readyFork(args: string[]): Promise<Logged> {
  const child = fork(signalLogger, args, { stdio: ["ignore", "pipe", "inherit", "ipc"] });
  cleanupAfterTest(child);
  const { collect } = await import("./helpers.js");
  const logged = collect(child);
  await logged.waitFor((e) => e.ready === true);
  return logged;
}

const fast = { timeoutMs: 200, gracePeriodMs: 200, checkIntervalMs: 20 };

/** What the target received, in order: signal names or `message:<level>`. */
function received(logged: Logged, pid = logged.child.pid): string[] {
  return logged.entries
    .filter((e) => e.pid === pid && (e.signal || e.message))
    .map((e) => e.signal ?? `message:${e.message!.level}`);
}

/** Arrival times (ms after `since`) of what the target received. */
function times(logged: Logged, since: number): number[] {
  return logged.entries
    .filter((e) => e.pid === logged.child.pid && (e.signal || e.message))
    .map((e) => e.at + logged.started - since);
}

describe("watch(child): the escalation ladder", () => {
  it("gives a plain child SIGINT at the timeout, SIGINT again after the grace period, then SIGTERM", async () => {
    const logged = await ready([]);
    const guard = timeGuard(fast);
    const events: InterruptEvent<ExecutionTimeout>[] = [];
    guard.on("interrupt", (event) => events.push(event));
    const since = performance.now();
    const result = await guard.watch(logged.child);
    await logged.closed; // 'exit' can come before the last lines are read
    expect(received(logged)).toEqual(["SIGINT", "SIGINT", "SIGTERM"]);
    times(logged, since).forEach((at, level) => {
      expect(at).toBeGreaterThanOrEqual(200 + level * 200 - 5);
      expect(at).toBeLessThan(200 + level * 200 + 1_000);
    });
    expect(result.code).toBe(3);
    expect(result.signal).toBeNull();
    expect(result.error).toBeInstanceOf(ExecutionTimeout);
    expect(result.error!.level).toBe(2);
    expect(events.map((e) => [e.level, e.action])).toEqual([
      [0, `SIGINT to pid ${logged.child.pid}`],
      [1, `SIGINT to pid ${logged.child.pid}`],
      [2, `SIGTERM to pid ${logged.child.pid}`],
    ]);
  });

  it("sends an IPC message first to a child with a channel: message, SIGINT, SIGTERM", async () => {
    const logged = await readyFork([]);
    const guard = timeGuard(fast);
    const result = await guard.watch(logged.child);
    await logged.closed;
    expect(received(logged)).toEqual(["message:0", "SIGINT", "SIGTERM"]);
    const message = logged.entries.find((e) => e.message)!.message;
    expect(message).toEqual({ type: "x-guard:interrupt", reason: "timeout", level: 0 });
    expect(result.code).toBe(3);
  });

  it("with interruptType signal: SIGINT, SIGTERM, then SIGKILL with sendKill", async () => {
    const logged = await ready(["--ignore"]);
    const guard = timeGuard({ ...fast, interruptType: "signal", sendKill: true });
    const result = await guard.watch(logged.child);
    await logged.closed;
    expect(received(logged)).toEqual(["SIGINT", "SIGTERM"]);
    expect(result).toMatchObject({ code: null, signal: "SIGKILL" });
    expect(result.error!.level).toBe(2);
  });

  it("with interruptType signal and no sendKill, level 2 is SIGTERM again", async () => {
    const logged = await ready(["--ignore"]);
    const guard = timeGuard({ ...fast, gracePeriodMs: 100, interruptType: "signal" });
    const warning = new Promise<string>((resolve) => guard.on("warning", (e) => resolve(e.message)));
    const handle = guard.watch(logged.child);
    expect(await warning).toContain(`level 2 SIGTERM to pid ${logged.child.pid}`);
    await delay(50);
    expect(received(logged)).toEqual(["SIGINT", "SIGTERM", "SIGTERM"]);
    logged.child.kill("SIGKILL");
    expect((await handle).signal).toBe("SIGKILL");
  });

  it("with interruptType exception: the message three times, or SIGINT three times without IPC", async () => {
    const guard = timeGuard({ ...fast, gracePeriodMs: 100, interruptType: "exception" });
    const withIpc = await readyFork(["--ignore"]);
    const plain = await ready(["--ignore"]);
    const done = new Promise<void>((resolve) => {
      let warnings = 0;
      guard.on("warning", () => ++warnings === 2 && resolve());
    });
    const handles = [guard.watch(withIpc.child), guard.watch(plain.child)];
    await done;
    await delay(50);
    expect(received(withIpc)).toEqual(["message:0", "message:1", "message:2"]);
    expect(received(plain)).toEqual(["SIGINT", "SIGINT", "SIGINT"]);
    withIpc.child.kill("SIGKILL");
    plain.child.kill("SIGKILL");
    const results = await Promise.all(handles);
    expect(results.map((r) => r.error?.level)).toEqual([2, 2]);
  });

  it("restarts on watched.progress() and resets the ladder", async () => {
    const logged = await ready([]);
    const guard = timeGuard(fast);
    const handle = guard.watch(logged.child);
    for (let i = 0; i < 6; i++) {
      await delay(80);
      handle.progress();
    }
    expect(received(logged)).toEqual([]);
    const result = await handle;
    await logged.closed;
    expect(received(logged)).toEqual(["SIGINT", "SIGINT", "SIGTERM"]);
    expect(result.code).toBe(3);
  });
});

describe("watch(child): process groups", () => {
  it("signals the whole group when the target leads one, the pid alone otherwise", async () => {
    // both exit at level 1 (SIGTERM): level 0 (SIGINT) reaches the members well before any sweep
    const leader = await ready(["--grandchild"], { detached: true });
    const grandchild = await leader.waitFor((e) => e.ready === true && e.pid !== leader.child.pid);
    const member = await ready(["--grandchild"]);
    const memberChild = await member.waitFor((e) => e.ready === true && e.pid !== member.child.pid);
    cleanupAfterTest({ pid: memberChild.pid }); // not in a group of its own: clean it up by pid
    const guard = timeGuard(fast);
    const actions: string[] = [];
    guard.on("interrupt", (e) => e.level === 0 && actions.push(e.action));
    await Promise.all([guard.watch(leader.child), guard.watch(member.child)]);
    await member.waitFor((e) => e.pid === member.child.pid && e.signal === "SIGTERM");
    expect(received(leader, grandchild.pid)[0]).toBe("SIGINT");
    expect(received(member, memberChild.pid)).toEqual([]); // the pid alone
    expect(actions.sort()).toEqual([
      `SIGINT to pid ${member.child.pid}`,
      `SIGINT to process group ${leader.child.pid}`,
    ]);
  });

  it("sweeps the group with SIGKILL once the leader exits, so ignoring members do not outlive it", async () => {
    const leader = await ready(["--grandchild"], { detached: true });
    const grandchild = await leader.waitFor((e) => e.ready === true && e.pid !== leader.child.pid);
    const guard = timeGuard(fast);
    const result = await guard.watch(leader.child);
    expect(result.code).toBe(3); // the leader left at SIGTERM
    await leader.closed; // the grandchild held stdout open until it was swept
    expect(received(leader, grandchild.pid)[0]).toBe("SIGINT"); // it ignored the ladder…
    expect(await goneWithin(grandchild.pid, 2_000)).toBe(true); // …and was swept
  });

  it("does not sweep when the guard sent nothing, or after close()", async () => {
    const quiet = await ready(["--grandchild", "--exit-after", "100"], { detached: true });
    const quietGrandchild = await quiet.waitFor((e) => e.ready === true && e.pid !== quiet.child.pid);
    cleanupAfterTest({ pid: quietGrandchild.pid });
    const result = await timeGuard({ timeoutMs: 30_000, checkIntervalMs: 20 }).watch(quiet.child);
    expect(result).toEqual({ code: 0, signal: null, error: null });
    await delay(100);
    expect(isAlive(quietGrandchild.pid)).toBe(true);

    const closing = await ready(["--grandchild"], { detached: true });
    const closingGrandchild = await closing.waitFor((e) => e.ready === true && e.pid !== closing.child.pid);
    cleanupAfterTest({ pid: closingGrandchild.pid });
    const guard = timeGuard(fast);
    const handle = guard.watch(closing.child);
    await once(guard, "interrupt"); // level 0 went to the group
    await handle.close();
    closing.child.kill("SIGTERM");
    expect((await handle).error!.level).toBe(0);
    await delay(100);
    expect(isAlive(closingGrandchild.pid)).toBe(true);
  });

  it("never signals the group it belongs to itself", async () => {
    // a detached shell leads a group; inside it, a guard watches the shell: it must signal the pid alone
    const script = `${packageDir}test/fixtures/watch-own-group.ts`;
    const leader = spawn(
      "sh",
      ["-c", `"${process.execPath}" --import tsx --conditions=@x/source "${script}" $$; true`],
      { cwd: packageDir, detached: true, stdio: ["ignore", "pipe", "inherit"] },
    );
    cleanupAfterTest(leader);
    let output = "";
    leader.stdout!.on("data", (chunk) => (output += chunk));
    await new Promise((resolve) => leader.stdout!.once("close", resolve));
    const report = JSON.parse(output.trim().split("\n").pop()!);
    expect(report.ownGroup).toBe(leader.pid);
    expect(report.action).toBe(`SIGINT to pid ${leader.pid}`);
    expect(report.gotSigint).toBe(false);
  });
});

describe("watch(child): results and lifecycle", () => {
  it("resolves with the exit code and a null error when the guard did not act", async () => {
    const child = spawn(process.execPath, ["-e", "process.exit(5)"]);
    cleanupAfterTest(child);
    const result = await timeGuard({ timeoutMs: 30_000 }).watch(child);
    expect(result).toEqual({ code: 5, signal: null, error: null });
  });

  it("resolves at once for a child that already exited, and with nulls for one that never spawned", async () => {
    const child = spawn(process.execPath, ["-e", ""]);
    await exited(child);
    await expect(timeGuard(fast).watch(child)).resolves.toEqual({ code: 0, signal: null, error: null });
    const missing = spawn("/nonexistent/command");
    missing.on("error", () => {});
    await expect(timeGuard(fast).watch(missing)).resolves.toEqual({ code: null, signal: null, error: null });
  });

  it("close() stops guarding without touching the target; the promise still settles at the exit", async () => {
    const logged = await ready([]);
    const guard = timeGuard(fast);
    const handle = guard.watch(logged.child);
    await delay(50);
    await handle.close();
    await handle.close(); // idempotent
    await delay(400);
    expect(received(logged)).toEqual([]);
    logged.child.kill("SIGUSR1");
    logged.child.kill("SIGKILL");
    await expect(handle).resolves.toEqual({ code: null, signal: "SIGKILL", error: null });
  });

  it("closes on `await using` (Symbol.asyncDispose)", async () => {
    const logged = await ready([]);
    const guard = timeGuard(fast);
    {
      await using _watched = guard.watch(logged.child);
      expect(guard.active.size).toBe(1);
    }
    expect(guard.active.size).toBe(0);
  });

  it("treats options.signal as close()", async () => {
    const logged = await ready([]);
    const controller = new AbortController();
    const handle = timeGuard(fast).watch(logged.child, { signal: controller.signal });
    controller.abort();
    await delay(300);
    expect(received(logged)).toEqual([]);
    logged.child.kill("SIGKILL");
    expect((await handle).error).toBeNull();
  });

  it("with an already aborted options.signal, guards nothing and keeps no activation", async () => {
    const logged = await ready([]);
    const guard = timeGuard(fast);
    const handle = guard.watch(logged.child, { signal: AbortSignal.abort() });
    expect(guard.active.size).toBe(0);
    await delay(300);
    expect(received(logged)).toEqual([]);
    logged.child.kill("SIGKILL");
    expect((await handle).error).toBeNull();
  });

  it("reports the error of the highest level sent", async () => {
    const logged = await ready(["--exit-on", "SIGINT"]);
    const result = await timeGuard(fast).watch(logged.child);
    expect(result.error).toMatchObject({ level: 0, code: "ERR_X_GUARD_TIMEOUT", limitMs: 200 });
  });

  it("throws ERR_X_GUARD_INVALID_OPTION at once for a target that is not a ChildProcess, a Worker or { pid }", () => {
    const guard = timeGuard(fast);
    for (const bad of [{ pid: -1 }, { pid: 1.5 }, { pid: "12" }, {}, null, "child", 42]) {
      expect(() => guard.watch(bad as never)).toThrow(
        expect.objectContaining({ code: "ERR_X_GUARD_INVALID_OPTION" }),
      );
    }
    expect(() => guard.watch({ pid: 1 }, { signal: 5 } as never)).toThrow(
      expect.objectContaining({ code: "ERR_X_GUARD_INVALID_OPTION" }),
    );
  });
});

describe("watch({ pid })", () => {
  it("escalates on a pid and resolves with nulls and the error once it is gone", async () => {
    const logged = await ready([]);
    const result = await timeGuard(fast).watch({ pid: logged.child.pid! });
    await logged.closed;
    expect(received(logged)).toEqual(["SIGINT", "SIGINT", "SIGTERM"]);
    expect(result.code).toBeNull();
    expect(result.signal).toBeNull();
    expect(result.error!.level).toBe(2);
  });

  it("counts a zombie as gone", async () => {
    // `sleep 0.3` becomes a zombie under `sleep 30`, which never reaps it
    const shell = spawn("sh", ["-c", "sleep 0.3 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    cleanupAfterTest(shell);
    const pid = await new Promise<number>((resolve) =>
      shell.stdout!.once("data", (d) => resolve(Number(String(d)))),
    );
    const started = performance.now();
    const result = await timeGuard({ timeoutMs: 60_000, checkIntervalMs: 20 }).watch({ pid });
    expect(result).toEqual({ code: null, signal: null, error: null });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe("watch(child): signal errors", () => {
  it("logs EPERM at warn and goes on with the ladder", async () => {
    const logged = await ready([]);
    const pid = logged.child.pid!;
    const kill = process.kill.bind(process);
    vi.spyOn(process, "kill").mockImplementation((target: number, signal?: string | number) => {
      if (target === pid && signal !== 0) throw Object.assign(new Error("kill EPERM"), { code: "EPERM" });
      return kill(target, signal);
    });
    // Registered after the child's cleanup, so it runs first: the child is killed with the real process.kill.
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const { logger, messages } = recordingLogger();
    const guard = timeGuard({ ...fast, gracePeriodMs: 50, logger });
    const levels: number[] = [];
    guard.on("interrupt", (e) => levels.push(e.level));
    const handle = guard.watch(logged.child);
    await new Promise((resolve) => guard.once("warning", resolve));
    expect(levels).toEqual([0, 1, 2]);
    expect(messages("warn").filter((w) => w.includes("could not send"))).toHaveLength(3);
    vi.restoreAllMocks();
    logged.child.kill("SIGKILL");
    await handle;
  });

  it("ends the activation on ESRCH (the target is gone): no event", async () => {
    const logged = await ready([]);
    const pid = logged.child.pid!;
    const kill = process.kill.bind(process);
    vi.spyOn(process, "kill").mockImplementation((target: number, signal?: string | number) => {
      if (target === pid && signal !== 0) throw Object.assign(new Error("kill ESRCH"), { code: "ESRCH" });
      return kill(target, signal);
    });
    // Registered after the child's cleanup, so it runs first: the child is killed with the real process.kill.
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const guard = timeGuard(fast);
    const events: GuardError[] = [];
    guard.on("interrupt", (e) => events.push(e.error));
    const handle = guard.watch(logged.child);
    await delay(300);
    expect(events).toEqual([]);
    expect(guard.active.size).toBe(0);
    vi.restoreAllMocks();
    logged.child.kill("SIGKILL");
    await expect(handle).resolves.toMatchObject({ signal: "SIGKILL", error: null });
  });
});
