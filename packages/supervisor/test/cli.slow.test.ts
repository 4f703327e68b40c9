import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { STOP_REQUEST_WINDOW_MS } from "@x/core/internal";
import { waitFor } from "@x/test-support/wait-for";
import Database from "better-sqlite3";
import { describe, expect, it, onTestFinished } from "vitest";
import { SupervisorStorage } from "../src/index.js";
import { runCli, serve } from "./cli-process.js";
import { type DaemonPaths, exchange, paths } from "./harness.js";
import { readDb } from "./helpers.js";

/** Whether no process `pid` exists any more (signal 0 fails). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

const hasSocat = spawnSync("socat", ["-V"]).status === 0;

describe("x-supervisor serve", () => {
  it("serves the original's workers (socat -t5, write then half-close) and stops with 0 on SIGTERM", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "hello 1.0 1.1\n");
    const proc = serve(p);
    await waitFor(() => proc.stderr().includes("listening"), 20_000, "the daemon to listen");
    expect(hasSocat).toBe(true);
    const socat = (input: string) =>
      spawnSync("socat", ["-t5", "-", `UNIX-CONNECT:${p.socket}`], { input, encoding: "utf8" }).stdout;
    expect(socat("READY\n")).toBe("JOB hello 1.0 1.1\n");
    expect(socat("DONE hello 0\n")).toBe("NOJOBS\n");
    expect(await exchange(p.socket, "READY\n")).toBe("NOJOBS\n");
    expect(proc.stdout()).toBe("");
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(existsSync(p.socket)).toBe(false);
    expect(proc.stderr()).toMatch(/job dispatched .*attrPath=hello/);
  });

  it("exits 64 on usage errors, 0 with --help, 78 when the socket is in use", async () => {
    const p = paths();
    const usage = runCli(["serve", p.db, p.fetchersDir]);
    const unknown = runCli(["serve", p.db, p.fetchersDir, p.socket, "--nope"]);
    const help = runCli(["serve", "--help"]);
    const top = runCli(["frobnicate"]);
    expect(await Promise.all([usage.exited, unknown.exited, help.exited, top.exited])).toEqual([
      64, 64, 0, 64,
    ]);
    expect(usage.stderr()).toBe(
      "x-supervisor serve: serve takes three arguments: <db> <fetchers-dir> <socket>\n" +
        "Try 'x-supervisor serve --help' for more information.\n",
    );
    expect(help.stdout()).toContain("Usage: x-supervisor serve");

    const first = serve(p);
    await waitFor(() => first.stderr().includes("listening"), 20_000, "the first daemon");
    const second = runCli(["serve", join(p.root, "other.db"), p.fetchersDir, p.socket]);
    expect(await second.exited).toBe(78);
    expect(second.stderr()).toContain("ERR_X_SUPERVISOR_SOCKET_IN_USE");
  });

  it("--socket-mode and --socket-group set the socket's mode and group; an unknown group exits 78", async () => {
    const p = paths();
    const proc = runCli([
      "serve",
      p.db,
      p.fetchersDir,
      p.socket,
      "--socket-mode",
      "0600",
      "--socket-group",
      "daemon",
    ]);
    onTestFinished(async () => {
      if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    await waitFor(() => proc.stderr().includes("listening"), 20_000, "the daemon");
    const stat = statSync(p.socket);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(stat.gid).toBe(1);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const unknown = runCli(["serve", p.db, p.fetchersDir, p.socket, "--socket-group", "no-such-group-x"]);
    expect(await unknown.exited).toBe(78);
    expect(unknown.stderr()).toContain("no group named");
    const bad = runCli(["serve", p.db, p.fetchersDir, p.socket, "--socket-mode", "0999"]);
    expect(await bad.exited).toBe(64);
  });

  it("exits 78 with a message naming the missing socket directory, creating nothing", async () => {
    const p = paths();
    const fetchersDir = join(p.root, "not-yet");
    const proc = runCli(["serve", p.db, fetchersDir, join(p.root, "missing", "s.sock")]);
    expect(await proc.exited).toBe(78);
    expect(proc.stderr()).toContain(`the socket's directory ${join(p.root, "missing")} does not exist`);
    expect(proc.stderr()).not.toContain("EACCES");
    expect(existsSync(p.db)).toBe(false);
    expect(existsSync(fetchersDir)).toBe(false);
  });
});

describe("x-supervisor status", () => {
  it("prints JSON figures read-only while the daemon runs, and a human summary", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "a 1\nb 2\nc 3\n");
    writeFileSync(join(p.fetchersDir, "g.2.txt.part"), "a 9\n");
    const proc = serve(p);
    await waitFor(() => proc.stderr().includes("listening"), 20_000, "the daemon");
    const now = Date.now();
    const first = await exchange(p.socket, "READY\n");
    const attr = first.split(" ")[1]!;
    await exchange(p.socket, `DONE ${attr} 2\n`);
    const json = runCli(["status", p.db, "--json"]);
    expect(await json.exited).toBe(0);
    const status = JSON.parse(json.stdout());
    expect(status).toMatchObject({
      schemaVersion: 2,
      rows: 4,
      finished: 1,
      failed: 1,
      stale: 0,
      fetcherRuns: [
        { fetcher: "f", runStarted: 1, isComplete: true, rows: 3 },
        { fetcher: "g", runStarted: 2, isComplete: false, rows: 1, pending: expect.any(Number) },
      ],
    });
    expect(status.now).toBeGreaterThanOrEqual(now); // epoch milliseconds
    expect(status.unfinishedJobs[0].started).toBeGreaterThanOrEqual(Math.floor(now / 1000) * 1000);
    expect(status.unfinishedJobs[0].started).toBeLessThanOrEqual(status.now);
    expect(status.inFlight).toBe(1);
    expect(status.waiting).toBe(2);
    expect(status.oldestWaiting).toMatchObject({ lastStarted: null });
    const human = runCli(["status", p.db]);
    expect(await human.exited).toBe(0);
    expect(human.stdout()).toMatch(/queue rows\s+4/);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  it("computes eligible, in-flight and stale around the 12-hour exclusion", async () => {
    const p = paths();
    const s = SupervisorStorage.open(p.db);
    s.upgrade();
    s.upsertFetcherRun("f", 1, true);
    s.upsertFetcherRun("g", 1, true);
    s.enqueue("f", 1, [
      ["old", "1"],
      ["recent", "1"],
      ["free", "1"],
    ]);
    s.enqueue("g", 1, [
      ["old", "2"],
      ["recent", "2"],
    ]);
    const now = Math.floor(Date.now() / 1000);
    s.db.exec(
      `INSERT INTO log VALUES ('old', ${now - 50_000}, NULL, NULL), ('recent', ${now - 100}, NULL, NULL)`,
    );
    s.db.exec("UPDATE queue SET is_dequeued = 1 WHERE fetcher_id = 1 AND attr_path IN ('old', 'recent')");
    s.close();
    const json = runCli(["status", p.db, "--json"]);
    expect(await json.exited).toBe(0);
    expect(JSON.parse(json.stdout())).toMatchObject({
      rows: 5,
      waiting: 3,
      eligible: 2,
      inFlight: 1,
      stale: 1,
      finished: 0,
      oldestWaiting: { attrPath: "free", fetcher: "f", lastStarted: null },
    });
  });

  it("exits 78 for a missing file (creating nothing) and for a schema version other than 2; 64 on usage", async () => {
    const p = paths();
    const missing = runCli(["status", p.db, "--json"]);
    expect(await missing.exited).toBe(78);
    expect(existsSync(p.db)).toBe(false);
    const db = new Database(p.db);
    db.pragma("user_version = 1");
    db.close();
    const old = runCli(["status", p.db]);
    expect(await old.exited).toBe(78);
    expect(old.stderr()).toContain("schema version is 1");
    expect(await runCli(["status"]).exited).toBe(64);
  });
});

describe("x-supervisor worker", () => {
  function script(p: DaemonPaths): string {
    const path = join(p.root, "job.sh");
    writeFileSync(
      path,
      `#!/bin/sh
printf '%s|%s|%s\\n' "$*" "$X_SUPERVISOR_ATTR_PATH" "$X_SUPERVISOR_PAYLOAD" >> "${p.root}/out"
case "$2" in
  slow) echo $$ > "${p.root}/slow.pid"; exec sleep 30 ;;
  finisher) trap 'exit 5' TERM; echo $$ > "${p.root}/slow.pid"; while :; do sleep 0.05; done ;;
  stubborn) trap '' TERM INT; echo $$ > "${p.root}/slow.pid"; exec sleep 30 ;;
  trapper) for s in HUP QUIT USR1 USR2; do trap "echo $s >> '${p.root}/signals'" $s; done
           trap "echo ALRM >> '${p.root}/signals'; exit 7" ALRM
           kill -HUP $PPID # as a closed terminal would, while the job starts: the worker must forward it
           echo $$ > "${p.root}/slow.pid"; while :; do sleep 0.05; done ;;
  fail) exit 3 ;;
esac
`,
    );
    chmodSync(path, 0o755);
    return path;
  }

  /**
   * The pid the job wrote into slow.pid. The shell creates the file before it writes the pid: wait for the
   * whole line, not for the file (an empty read is pid 0, which names our own process group).
   */
  function jobPid(p: DaemonPaths, what: string): Promise<number> {
    const file = join(p.root, "slow.pid");
    const written = () => (existsSync(file) ? readFileSync(file, "utf8") : "");
    return waitFor(() => (written().endsWith("\n") ? Number(written()) : undefined), 20_000, what);
  }

  it("runs the command per job with the attr path and payload fields, reports exit codes, 124 on timeout", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "ok  1.0 1.1 \nfail 2 3\nslow 0 1\n");
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 20_000, "the daemon");
    const worker = runCli([
      "worker",
      p.socket,
      "--timeout",
      "1",
      "--idle-delay",
      "60",
      "--",
      script(p),
      "first",
    ]);
    onTestFinished(() => {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
    });
    const log = () =>
      Object.fromEntries(
        readDb(
          p.db,
          (db) =>
            db.prepare("SELECT attr_path, exit_code FROM log").all() as Array<{
              attr_path: string;
              exit_code: number | null;
            }>,
        ).map((r) => [r.attr_path, r.exit_code]),
      );
    await waitFor(
      () => Object.values(log()).filter((c) => c !== null).length === 3,
      30_000,
      "three finished jobs",
    );
    expect(log()).toEqual({ ok: 0, fail: 3, slow: 124 });
    const out = readFileSync(join(p.root, "out"), "utf8").split("\n").filter(Boolean).sort();
    expect(out).toEqual([
      "first fail 2 3|fail|2 3",
      "first ok 1.0 1.1|ok| 1.0 1.1",
      "first slow 0 1|slow|0 1",
    ]);
    expect(worker.stderr()).toContain("job slow was interrupted because it was taking too long");
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
  });

  it("passes a fetcher line's values that look like options behind --, as operands", async () => {
    const p = paths();
    const target = join(p.root, "x");
    // What a fetcher might write: an attr path and a payload field that an option parser would take as options.
    writeFileSync(join(p.fetchersDir, "f.1.txt"), `--output=${target} 1.0 --force\nplain 1.0 1.1\n`);
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 20_000, "the daemon");
    const log = join(p.root, "seen");
    const optionParser = join(import.meta.dirname, "fixtures", "option-parser.mjs");
    const worker = runCli([
      "worker",
      p.socket,
      "--idle-delay",
      "60",
      "--",
      process.execPath,
      optionParser,
      log,
      "update",
    ]);
    onTestFinished(() => {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
    });
    const seen = () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line))
        : [];
    await waitFor(() => seen().length === 2, 30_000, "both jobs");
    expect(seen().sort((a, b) => a.positionals[1].localeCompare(b.positionals[1]))).toEqual([
      {
        argv: ["update", "--", `--output=${target}`, "1.0", "--force"],
        values: {},
        positionals: ["update", `--output=${target}`, "1.0", "--force"],
      },
      {
        argv: ["update", "plain", "1.0", "1.1"],
        values: {},
        positionals: ["update", "plain", "1.0", "1.1"],
      },
    ]);
    expect(existsSync(target)).toBe(false);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
  });

  it("on SIGTERM stops the running command, reports how it ended without taking another job, exits 0; 64 on usage errors", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "finisher 0 1\nslow 0 1\n");
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 20_000, "the daemon");
    const worker = runCli(["worker", p.socket, "--", script(p), "x"]);
    const pid = await jobPid(p, "the first job");
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    await waitFor(() => isGone(pid), 10_000, "the command to be stopped");
    // The job that ran (either one: they have the same age) is finished: "finisher" with its own status
    // after SIGTERM, "slow" with 143 (killed by it). The other was never handed out.
    const rows = readDb(p.db, (db) => db.prepare("SELECT attr_path, exit_code FROM log").all());
    expect(rows).toEqual([
      expect.toSatisfy(
        (row: { attr_path: string; exit_code: number }) =>
          (row.attr_path === "finisher" && row.exit_code === 5) ||
          (row.attr_path === "slow" && row.exit_code === 143),
      ),
    ]);
    expect(worker.stderr()).toContain("reported the last job before stopping");
    expect(await runCli(["worker", p.socket]).exited).toBe(64);
    expect(await runCli(["worker", p.socket, "--timeout", "soon", "--", "true"]).exited).toBe(64);
    const badSize = runCli(["worker", p.socket, "--max-memory", "5T", "--", "true"]);
    expect(await badSize.exited).toBe(64);
    expect(badSize.stderr()).toContain('--max-memory: "5T" is not a size');
  });

  it("forwards HUP, QUIT, USR1, USR2 and ALRM to the running job's group, from its start, and reports how it ended", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "trapper 0 1\n");
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 20_000, "the daemon");
    const worker = runCli(["worker", p.socket, "--idle-delay", "60", "--", script(p), "x"]);
    onTestFinished(() => {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
    });
    await jobPid(p, "the job");
    const received = () =>
      existsSync(join(p.root, "signals"))
        ? readFileSync(join(p.root, "signals"), "utf8").split("\n").filter(Boolean)
        : [];
    await waitFor(() => received().length === 1, 10_000, "the job to get the SIGHUP it sent the worker");
    const sent = ["SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM"] as const;
    for (const [i, signal] of sent.entries()) {
      worker.child.kill(signal);
      await waitFor(() => received().length === i + 2, 10_000, `the job to get ${signal}`);
    }
    expect(received()).toEqual(["HUP", "HUP", "QUIT", "USR1", "USR2", "ALRM"]);
    const exitCode = () =>
      readDb(
        p.db,
        (db) => db.prepare("SELECT exit_code FROM log").get() as { exit_code: number | null } | undefined,
      )?.exit_code;
    await waitFor(() => typeof exitCode() === "number", 20_000, "the DONE");
    expect(exitCode()).toBe(7);
    expect(worker.child.exitCode).toBe(null);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
  });

  it("reads --max-memory in bytes, as x-guard does: a bare 20000000 (19 MiB) stops a Node job with 125", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "big 0 1\n");
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 20_000, "the daemon");
    const node = [process.execPath, "-e", "setTimeout(() => {}, 30_000)"];
    const worker = runCli(["worker", p.socket, "--max-memory", "20000000", "--", ...node]);
    onTestFinished(() => {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
    });
    const exitCode = () =>
      readDb(
        p.db,
        (db) => db.prepare("SELECT exit_code FROM log").get() as { exit_code: number | null } | undefined,
      )?.exit_code;
    await waitFor(() => typeof exitCode() === "number", 30_000, "the finished job");
    expect(exitCode()).toBe(125);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
  });

  it("on a second SIGTERM 1 s or more after the first kills the command's process group and exits 143", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "stubborn 0 1\n");
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 20_000, "the daemon");
    const worker = runCli(["worker", p.socket, "--", script(p), "x"]);
    const pid = await jobPid(p, "the stubborn job");
    worker.child.kill("SIGTERM");
    await waitFor(() => worker.stderr().includes("stopping"), 20_000, "the graceful stop");
    // The window is measured from when the worker took the first signal, before it logged it.
    await new Promise((resolve) => setTimeout(resolve, STOP_REQUEST_WINDOW_MS));
    expect(() => process.kill(pid, 0)).not.toThrow();
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(143);
    await waitFor(() => isGone(pid), 10_000, "the group to be killed");
  });
});

describe("a closed output (x-supervisor … | head)", () => {
  /** The exit code a shell reports for a command killed by SIGPIPE, and what every subcommand exits with. */
  const brokenPipe = 141;

  it("status exits 141 without a stack trace when its stdout is closed, with --json or not", async () => {
    const p = paths();
    const s = SupervisorStorage.open(p.db);
    s.upgrade();
    s.close();
    for (const args of [
      ["status", p.db],
      ["status", p.db, "--json"],
      ["status", "--help"],
    ]) {
      const proc = runCli(args, {}, "stdout");
      expect(await proc.exited).toBe(brokenPipe);
      expect(proc.stderr()).toBe("");
    }
  });

  it("the top-level help exits 141 when its stdout is closed", async () => {
    const proc = runCli(["--help"], {}, "stdout");
    expect(await proc.exited).toBe(brokenPipe);
    expect(proc.stderr()).toBe("");
  });

  it("serve keeps serving when the reader of its log (stderr) goes away, and still stops gracefully", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "hello 1 2\n");
    const proc = runCli(["serve", p.db, p.fetchersDir, p.socket], {}, "stderr");
    onTestFinished(async () => {
      if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    // It has logged into the closed pipe by the time it answers (at least "listening").
    await waitFor(() => existsSync(p.socket) || proc.child.exitCode !== null, 20_000, "the socket");
    expect(await exchange(p.socket, "READY\n")).toBe("JOB hello 1 2\n");
    expect(await exchange(p.socket, "DONE hello 0\n")).toBe("NOJOBS\n"); // logs "job done" too
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(existsSync(p.socket)).toBe(false);
  });

  it("worker keeps running jobs when the reader of its log (stderr) goes away", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "a 1\nb 2\n");
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 20_000, "the daemon");
    const worker = runCli(["worker", p.socket, "--", "true"], {}, "stderr");
    onTestFinished(async () => {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      await worker.exited;
    });
    const finished = () =>
      readDb(p.db, (db) => db.prepare("SELECT count(*) AS n FROM log WHERE exit_code = 0").get()) as {
        n: number;
      };
    // Each job is logged ("job started", "job finished") into the closed pipe.
    await waitFor(() => finished().n === 2 || worker.child.exitCode !== null, 30_000, "both jobs done");
    expect(worker.child.exitCode).toBe(null);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
  });
});
