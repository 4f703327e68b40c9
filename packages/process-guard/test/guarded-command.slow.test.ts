import type { ChildProcess } from "node:child_process";
import { chmod, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recordingLogger } from "@x/test-support/recording-logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GuardedInterruptEvent, runGuardedCommand } from "../src/guarded-command.js";
import { delay, fixtures, goneWithin, jsonLines, runThroughPipe, signalLogger } from "./helpers.js";

const node = process.execPath;
const quiet = { stdio: "ignore" } as const;
const copyToClosedOutput = `${fixtures}copy-to-closed-output.ts`;

let dir: string;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "x-guard-command-")));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** An `onSpawn` that hands over the child, and the child's stdout as it grows. */
function spawned() {
  let text = "";
  let resolve!: (child: ChildProcess) => void;
  const child = new Promise<ChildProcess>((done) => {
    resolve = done;
  });
  const onSpawn = (_pid: number, started: ChildProcess) => {
    started.stdout?.on("data", (chunk) => {
      text += chunk;
    });
    resolve(started);
  };
  /** Resolves once `text` occurs `times` times in the output; throws after 15 s. */
  const waitFor = async (wanted: string, times = 1) => {
    await child;
    const end = Date.now() + 15_000;
    while (text.split(wanted).length <= times) {
      if (Date.now() > end) throw new Error(`no ${times}× ${wanted} in ${JSON.stringify(text)}`);
      await delay(20);
    }
  };
  return { onSpawn, output: () => text, waitFor };
}

describe("runGuardedCommand", () => {
  it("runs the command with its arguments, env and cwd, and reports its own exit code", async () => {
    const out = join(dir, "out");
    let spawned: { pid: number; child: ChildProcess } | undefined;
    const result = await runGuardedCommand(
      "sh",
      ["-c", `printf '%s|%s|%s' "$1" "$GREETING" "$PWD" > ${out}; exit 7`, "sh", "a b"],
      {
        ...quiet,
        timeoutMs: 30_000,
        env: { PATH: process.env.PATH, GREETING: "hello" },
        cwd: dir,
        onSpawn: (pid, child) => {
          spawned = { pid, child };
        },
      },
    );
    expect(result).toEqual({
      exitCode: 7,
      limit: undefined,
      code: 7,
      signal: null,
      pid: spawned?.pid,
      spawnError: undefined,
    });
    expect(spawned?.child.pid).toBe(spawned?.pid);
    expect(await readFile(out, "utf8")).toBe(`a b|hello|${dir}`);
  });

  it("reports 127 for a missing command and 126 for one that cannot be run, without spawning", async () => {
    let spawns = 0;
    const onSpawn = () => spawns++;
    const missing = await runGuardedCommand(join(dir, "missing"), [], { ...quiet, onSpawn });
    expect(missing).toMatchObject({ exitCode: 127, pid: undefined, code: null });
    expect(missing.spawnError?.code).toBe("ENOENT");
    const plain = join(dir, "plain.txt");
    await writeFile(plain, "echo hi\n");
    await chmod(plain, 0o644);
    const cannot = await runGuardedCommand(plain, [], { ...quiet, onSpawn });
    expect(cannot).toMatchObject({ exitCode: 126 });
    expect(cannot.spawnError?.code).toBe("EACCES");
    expect(spawns).toBe(0);
  });

  it("reports 128 + n for a signal it did not send", async () => {
    const result = await runGuardedCommand("sh", ["-c", "kill -USR1 $$"], { ...quiet, timeoutMs: 30_000 });
    expect(result).toMatchObject({ exitCode: 138, signal: "SIGUSR1", code: null, limit: undefined });
  });

  it("reports 124 once the time limit acted, whatever happened next, with one event and log line per level", async () => {
    const events: GuardedInterruptEvent[] = [];
    const { logger, messages } = recordingLogger();
    // SIGINT is ignored (by the loop's sleep too); SIGTERM ends the shell with 5
    const result = await runGuardedCommand(
      "sh",
      ["-c", "trap '' INT; trap 'exit 5' TERM; while :; do sleep 0.05; done"],
      { ...quiet, timeoutMs: 1_000, gracePeriodMs: 300, logger, onInterrupt: (event) => events.push(event) },
    );
    expect(result).toMatchObject({ exitCode: 124, limit: "time", code: 5 });
    expect(events.map(({ limit, level }) => ({ limit, level }))).toEqual([
      { limit: "time", level: 0 },
      { limit: "time", level: 1 },
    ]);
    expect(events[0]!.action).toBe(`SIGINT to process group ${result.pid}`);
    expect(events[1]!.action).toBe(`SIGTERM to process group ${result.pid}`);
    expect(messages("warn")).toEqual([
      `time limit: SIGINT to process group ${result.pid}`,
      `time limit: SIGTERM to process group ${result.pid}`,
    ]);
  });

  it("killSignal and killAfterMs: timeout(1)'s ladder, the signal, then SIGKILL, and 137 for a killed command", async () => {
    const events: GuardedInterruptEvent[] = [];
    const result = await runGuardedCommand("sh", ["-c", "trap '' TERM; while :; do sleep 0.05; done"], {
      ...quiet,
      timeoutMs: 1_000, // room for sh to set its trap on a loaded machine
      killAfterMs: 200,
      onInterrupt: (event) => events.push(event),
    });
    expect(result).toMatchObject({ exitCode: 137, limit: "time", signal: "SIGKILL" });
    expect(events.map(({ level, action }) => `${level} ${action}`)).toEqual([
      `0 SIGTERM to process group ${result.pid}`,
      `1 SIGKILL to process group ${result.pid}`,
    ]);
    // without killAfterMs, the first signal alone: the command is waited for, as by timeout(1)
    const once: GuardedInterruptEvent[] = [];
    const waited = await runGuardedCommand(
      "sh",
      ["-c", "trap 'sleep 0.5; exit 6' INT; while :; do sleep 0.05; done"],
      {
        ...quiet,
        timeoutMs: 1_000,
        killSignal: "SIGINT",
        onInterrupt: (event) => once.push(event),
      },
    );
    expect(waited).toMatchObject({ exitCode: 124, code: 6 });
    expect(once.map(({ level, action }) => `${level} ${action}`)).toEqual([
      `0 SIGINT to process group ${waited.pid}`,
    ]);
    // a stop by signal sends killSignal too
    const controller = new AbortController();
    const stopped = runGuardedCommand("sh", ["-c", "trap 'exit 3' HUP; while :; do sleep 0.05; done"], {
      ...quiet,
      killSignal: "SIGHUP",
      signal: controller.signal,
      onSpawn: () => setTimeout(() => controller.abort(), 1_000),
    });
    expect((await stopped).exitCode).toBe(3);
  });

  it("reports 125 when the memory limit (bytes, whole tree) stopped the command", async () => {
    const result = await runGuardedCommand(
      node,
      [signalLogger, "--allocate-mb", "128", "--exit-on", "SIGINT"],
      { ...quiet, maxMemoryBytes: 64 * 1024 ** 2, timeoutMs: 60_000 },
    );
    expect(result).toMatchObject({ exitCode: 125, limit: "memory" });
  });

  it("ends the memory limit's ladder with SIGKILL under sendKill", async () => {
    const hog =
      "process.on('SIGINT', () => {}); process.on('SIGTERM', () => {}); const a = []; setInterval(() => a.push(Buffer.alloc(8e6, 1)), 5);";
    const started = Date.now();
    const result = await runGuardedCommand(node, ["-e", hog], {
      ...quiet,
      maxMemoryBytes: 80 * 1024 ** 2,
      gracePeriodMs: 100,
      sendKill: true,
    });
    expect(result).toMatchObject({ exitCode: 125, limit: "memory", signal: "SIGKILL" });
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("on abort sends SIGTERM to the group, then the ladder every grace period", async () => {
    const controller = new AbortController();
    const { logger, messages } = recordingLogger();
    const child = spawned();
    const running = runGuardedCommand(
      "sh",
      ["-c", "trap 'echo TERM' TERM; trap 'echo INT' INT; echo ready; while :; do sleep 0.05; done"],
      {
        stdio: ["ignore", "pipe", "ignore"],
        gracePeriodMs: 300,
        sendKill: true,
        signal: controller.signal,
        logger,
        onSpawn: child.onSpawn,
      },
    );
    await child.waitFor("ready");
    controller.abort();
    const result = await running;
    // SIGTERM (caught), SIGINT (caught), SIGTERM (caught), then SIGKILL: not a limit, so 128 + 9
    expect(result).toMatchObject({ exitCode: 137, signal: "SIGKILL", limit: undefined });
    expect(child.output()).toBe("ready\nTERM\nINT\nTERM\n");
    expect(messages("info")).toContain("stopping the command: SIGTERM to its process group");
  });

  it("rejects with the reason of an already aborted signal and runs nothing", async () => {
    const reason = new Error("stopped before");
    let spawned = false;
    const outcome = runGuardedCommand("true", [], {
      signal: AbortSignal.abort(reason),
      onSpawn: () => {
        spawned = true;
      },
    });
    await expect(outcome).rejects.toBe(reason);
    expect(outcome.kill("SIGTERM")).toBe(false);
    expect(spawned).toBe(false);
  });

  it("kill() forwards a signal as it is and sweeps the group after the command exits", async () => {
    const child = spawned();
    const command = runGuardedCommand(node, [signalLogger, "--grandchild", "--exit-on", "SIGINT"], {
      stdio: ["ignore", "pipe", "ignore"],
      timeoutMs: 60_000,
      onSpawn: child.onSpawn,
    });
    await child.waitFor('"ready":true', 2);
    expect(command.kill("SIGINT")).toBe(true);
    const result = await command;
    expect(result).toMatchObject({ exitCode: 3, code: 3, limit: undefined });
    expect(command.kill("SIGTERM")).toBe(false);
    const pids = jsonLines(child.output())
      .filter((entry) => entry.ready)
      .map((entry) => entry.pid as number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await goneWithin(pid, 2_000)).toBe(true);
  });

  it("progressOnOutput: when our reader goes away, the command gets SIGPIPE and nothing throws", async () => {
    // a failed write is reported on the next tick while the next chunk may already be there: repeat, so that
    // a listener removed too early would show as an uncaught EPIPE at least once
    for (let run = 0; run < 5; run++) {
      const result = await runThroughPipe(copyToClosedOutput, [], "stdout", "head -c 100000 >/dev/null");
      expect(result.other).toBe('{"exitCode":141,"signal":"SIGPIPE"}\n');
      expect(result.status).toBe(0);
    }
  });

  it("throws ERR_X_GUARD_INVALID_OPTION at once for a bad argument or option", () => {
    expect(() => runGuardedCommand("", [])).toThrow(
      expect.objectContaining({
        code: "ERR_X_GUARD_INVALID_OPTION",
        message: expect.stringContaining("command"),
      }),
    );
    expect(() => runGuardedCommand("true", [], { timeoutMs: -1 })).toThrow(
      "invalid option timeoutMs: -1 (expected a finite number of milliseconds ≥ 0)",
    );
    // beyond the longest timer, Node would fire it at once (timeoutMs is waited for in steps instead)
    for (const name of ["gracePeriodMs", "checkIntervalMs"]) {
      expect(() => runGuardedCommand("true", [], { [name]: 2 ** 31 })).toThrow(
        `invalid option ${name}: 2147483648`,
      );
    }
    expect(() => runGuardedCommand("true", [], { maxMemoryBytes: Number.NaN })).toThrow(
      "invalid option maxMemoryBytes: NaN (expected a finite number of bytes ≥ 0)",
    );
    for (const name of ["timeout", "maxMemory", "gracePeriod", "checkInterval"]) {
      expect(() => runGuardedCommand("true", [], { [name]: 1 } as never)).toThrow(
        `unknown option ${name}: 1; did you mean ${name}${name === "maxMemory" ? "Bytes" : "Ms"}?`,
      );
    }
    expect(() => runGuardedCommand("true", [], { nope: 1 } as never)).toThrow(/nope/);
    expect(() => runGuardedCommand("true", [], { killSignal: "SIGNOPE" as never })).toThrow(
      `invalid option killSignal: "SIGNOPE"`,
    );
    expect(() => runGuardedCommand("true", [], { killAfterMs: 1_000, sendKill: true })).toThrow(
      "invalid option sendKill: true (expected absent with killSignal or killAfterMs (timeout(1)'s ladder))",
    );
    expect(() => runGuardedCommand("true", [], { killSignal: "SIGINT", gracePeriodMs: 5 })).toThrow(
      "invalid option gracePeriodMs",
    );
  });
});
