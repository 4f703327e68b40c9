import { type ChildProcess, spawn } from "node:child_process";
import { readlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runGuardedCommand } from "../src/guarded-command.js";
import { ownSession, pgidOf, startTimeOf } from "../src/process-info.js";
import { spawnReaper } from "../src/reaper.js";
import {
  cleanupAfterTest,
  collect,
  delay,
  exited,
  fixtures,
  goneWithin,
  groupExists,
  type Logged,
  reaperOf,
  runningMembers,
  signalLogger,
  startTs,
  until,
} from "./helpers.js";

const node = process.execPath;
const cli = new URL("../src/cli.ts", import.meta.url).pathname;
const guardedLogger = `${fixtures}guarded-logger.ts`;

/** Starts a TypeScript guard (x-guard or a fixture) whose command is the signal logger, and waits for both loggers. */
async function startGuard(
  file: string,
  args: string[],
): Promise<{ guard: ChildProcess; log: Logged; pgid: number }> {
  const { child } = startTs(file, args);
  const log = collect(child);
  const ready = () => log.entries.filter((entry) => entry.ready === true);
  await log.waitFor(() => ready().length === 2, 30_000);
  const pgid = pgidOf(ready()[0]!.pid) as number;
  cleanupAfterTest({ pid: pgid });
  cleanupAfterTest(child);
  return { guard: child, log, pgid };
}

/** After the guard died: no member of the group runs within 5 s, and the group is gone (ESRCH) within 15 s. */
async function expectGroupEnds(pgid: number): Promise<void> {
  // the members become zombies at once; init, their new parent, reaps them (every 2 s or so on some hosts)
  await until(() => runningMembers(pgid).length === 0, 5_000, `every process of group ${pgid} killed`);
  await until(() => !groupExists(pgid), 15_000, `process group ${pgid} gone (ESRCH)`);
}

describe("a guard that dies leaves no job running: the reaper", () => {
  it("kills the command's group when x-guard is killed with SIGKILL", async () => {
    const { guard, pgid } = await startGuard(cli, [
      "--timeout",
      "60",
      "--",
      node,
      signalLogger,
      "--grandchild",
      "--ignore",
    ]);
    expect(runningMembers(pgid)).toHaveLength(2);
    const reaper = reaperOf(guard.pid!);
    expect(reaper).toBeGreaterThan(0);
    guard.kill("SIGKILL");
    await exited(guard);
    await expectGroupEnds(pgid);
    expect(await goneWithin(reaper!, 5_000)).toBe(true);
  });

  it("kills the command's group when a Node program using runGuardedCommand is killed with SIGKILL", async () => {
    const { guard, pgid } = await startGuard(guardedLogger, []);
    guard.kill("SIGKILL");
    await exited(guard);
    await expectGroupEnds(pgid);
  });

  it("kills it when the guard dies of a signal it does not forward", async () => {
    const { guard, log, pgid } = await startGuard(guardedLogger, ["--signals", "SIGUSR2"]);
    guard.kill("SIGUSR2"); // forwarded: the guard lives on
    await log.waitFor((entry) => entry.signal === "SIGUSR2");
    guard.kill("SIGTERM"); // not forwarded here: the default action ends the guard
    expect(await exited(guard)).toEqual({ code: null, signal: "SIGTERM" });
    await expectGroupEnds(pgid);
  });

  it("with reaper: false, a SIGKILL of the guard leaves the command running unguarded (what the option turns off)", async () => {
    const { guard, pgid } = await startGuard(guardedLogger, ["--no-reaper"]);
    expect(reaperOf(guard.pid!)).toBeUndefined();
    guard.kill("SIGKILL");
    await exited(guard);
    await delay(500); // what the reaper would have done by now
    expect(runningMembers(pgid)).toHaveLength(2); // killed by cleanupAfterTest
  });

  it("starts with the command and leaves when it ends normally, leaving the rest of the group alone", async () => {
    let pgid = 0;
    let reaper: number | undefined;
    let reaperCwd: string | undefined;
    // the command leaves a background sleep in its group and exits 0: nobody signalled the group, so it stays
    const result = await runGuardedCommand("sh", ["-c", "sleep 30 & sleep 0.5"], {
      stdio: "ignore",
      timeoutMs: 30_000,
      onSpawn: (pid) => {
        pgid = pid;
        cleanupAfterTest({ pid });
        reaper = reaperOf(process.pid); // started before the command
        if (reaper !== undefined) reaperCwd = readlinkSync(`/proc/${reaper}/cwd`);
      },
    });
    expect(result.exitCode).toBe(0);
    expect(reaper).toBeGreaterThan(0);
    expect(reaperCwd).toBe("/"); // it keeps no directory of ours busy
    expect(await goneWithin(reaper!, 5_000)).toBe(true);
    expect(runningMembers(pgid)).toHaveLength(1); // the background sleep
  });

  it("with reaper: false, starts none", async () => {
    let reaper: number | undefined = -1;
    const result = await runGuardedCommand("sh", ["-c", "sleep 0.2"], {
      stdio: "ignore",
      timeoutMs: 30_000,
      reaper: false,
      onSpawn: () => {
        reaper = reaperOf(process.pid);
      },
    });
    expect(result.exitCode).toBe(0);
    expect(reaper).toBeUndefined();
  });
});

describe("the reaper kills only the job's group", () => {
  /** A detached command (its own session and group); killed after the test. */
  function detached(script: string): ChildProcess {
    const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
    cleanupAfterTest(child);
    return child;
  }

  /**
   * Starts a reaper, arms it for `pgid` (in `session`, by default its own) and fires it (an end of file without
   * `done`, as when the guard dies).
   */
  async function fire(pgid: number, startTime: string, word = "", session = pgid): Promise<void> {
    const reaper = spawnReaper();
    reaper.stdin!.end(`${pgid} ${session} ${startTime}\n${word}`);
    expect(await exited(reaper)).toEqual({ code: 0, signal: null });
  }

  it("kills the group when its leader has the start time the guard saw", async () => {
    const job = detached("sleep 30 & exec sleep 30");
    await until(() => runningMembers(job.pid!).length === 2, 10_000, "both sleeps");
    await fire(job.pid!, startTimeOf(job.pid!)!);
    await until(() => runningMembers(job.pid!).length === 0, 5_000, "both sleeps killed");
  });

  it("leaves at once when it was never armed: the guard died before the command started, or it did not start", async () => {
    for (const input of ["", "done\n"]) {
      const reaper = spawnReaper();
      reaper.stdin!.end(input);
      expect(await exited(reaper)).toEqual({ code: 0, signal: null });
    }
  });

  it("leaves it alone after done, or when the leader's start time differs (a reused pid)", async () => {
    const job = detached("exec sleep 30");
    const started = startTimeOf(job.pid!)!;
    await fire(job.pid!, started, "done\n");
    await fire(job.pid!, String(Number(started) - 1));
    await delay(300); // a SIGKILL takes a moment to land: give a wrong one time to show
    expect(runningMembers(job.pid!)).toEqual([job.pid]);
  });

  it("with the leader gone, kills the members left in the job's session", async () => {
    const job = detached("sleep 30 & exit 0"); // the leader exits; its background sleep stays in the group
    await exited(job);
    await until(() => runningMembers(job.pid!).length === 1, 10_000, "the sleep alone");
    await fire(job.pid!, "1");
    await until(() => runningMembers(job.pid!).length === 0, 5_000, "the sleep killed");
  });

  /** A group of its own in our session whose leader has exited, leaving a `sleep`: its pgid. */
  async function groupInOurSession(): Promise<number> {
    // bash with job control puts a background job in a group of its own, in bash's session (ours)
    const bash = spawn("bash", ["-c", "set -m; (sleep 30 & exit 0) & echo $!; wait"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    let out = "";
    bash.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    await exited(bash);
    const pgid = Number(out.trim());
    expect(pgid).toBeGreaterThan(0);
    cleanupAfterTest({ pid: pgid });
    await until(() => runningMembers(pgid).length === 1, 10_000, "the sleep alone");
    return pgid;
  }

  it("with the leader gone, leaves alone a group of that number in another session (a reused pgid)", async () => {
    const pgid = await groupInOurSession();
    await fire(pgid, "1");
    await delay(300); // a SIGKILL takes a moment to land: give a wrong one time to show
    expect(runningMembers(pgid)).toHaveLength(1);
  });

  it("with the leader gone, kills the members of a job that runs in the guard's session (as x-guard's)", async () => {
    const pgid = await groupInOurSession();
    await fire(pgid, "1", "", ownSession());
    await until(() => runningMembers(pgid).length === 0, 5_000, "the sleep killed");
  });
});
