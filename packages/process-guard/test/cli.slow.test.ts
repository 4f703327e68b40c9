import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { STOP_REQUEST_WINDOW_MS } from "@x/core/internal";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseGuardArgs, runGuardCommand } from "../src/command.js";
import { isAlive, pgidOf } from "../src/process-info.js";
import {
  cleanupAfterTest,
  collect,
  delay,
  goneWithin,
  type Logged,
  packageDir,
  quote,
  runThroughPipe,
  signalLogger,
  startTs,
} from "./helpers.js";

const cli = new URL("../src/cli.ts", import.meta.url).pathname;
const node = process.execPath;
const xGuard = (args: string[], input?: string) => startTs(cli, args, input === undefined ? {} : { input });
const run = (args: string[], input?: string) => xGuard(args, input).done;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "x-guard-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs x-guard in this process (parsing and usage only), capturing what it writes. */
async function inProcess(args: string[]) {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await runGuardCommand(args);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe("x-guard: usage", () => {
  it("prints usage on stdout and exits 0 for --help", async () => {
    const { code, stdout, stderr } = await run(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: x-guard");
    expect(stdout).toContain("--max-memory SIZE");
    expect(stdout).toContain("SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to x-guard are forwarded");
    expect(stdout).toContain("SIGALRM is the time limit, reached now");
    expect(stdout).toContain("a reaper process kills the command's group");
    expect(stderr).toBe("");
    expect((await inProcess(["-h"])).stdout).toBe(stdout);
  });

  it("exits 125 for a bad command line, as timeout(1), with getopt's line and a pointer to the help", async () => {
    const { code, stdout, stderr } = await run(["--nope", "--", "true"]);
    expect(code).toBe(125);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      "x-guard: unrecognized option '--nope'\nTry 'x-guard --help' for more information.\n",
    );
  });

  it("prints its name and version for --version, as x-supervisor and x-rmq-storage do", async () => {
    const { version } = JSON.parse(await readFile(join(packageDir, "package.json"), "utf8"));
    expect(await run(["--version"])).toMatchObject({ code: 0, stdout: `x-guard ${version}\n`, stderr: "" });
    expect((await inProcess(["--timeout", "1", "--version"])).stdout).toBe(`x-guard ${version}\n`);
    expect((await inProcess(["--version=1"])).code).toBe(125);
  });

  it.each([
    [["--", "true", "x"], "x-guard: invalid time interval 'true'"],
    [["-k", "1", "--grace", "1", "5", "true"], "-s and -k (timeout(1)'s ladder) do not go with --grace"],
    [["-s", "NOPE", "5", "true"], "x-guard: 'NOPE': invalid signal"],
    [["--signal", "99", "5", "true"], "x-guard: '99': invalid signal"],
    [["--timeout", "abc", "--", "true"], "x-guard: invalid time interval 'abc'"],
    [["--timeout", "-1", "--", "true"], "x-guard: invalid time interval '-1'"],
    [["--grace", "5ms", "--timeout", "1", "--", "true"], "x-guard: invalid time interval '5ms'"],
    [["--max-memory", "5T", "--", "true"], 'x-guard: --max-memory: "5T" is not a size'],
    [["--timeout"], "x-guard: option '--timeout' requires an argument"],
    [["--send-kill=yes", "--timeout", "1", "--", "true"], "option '--send-kill' doesn't allow an argument"],
  ])("exits 125 for %j: %s", async (args, message) => {
    const { code, stdout, stderr } = await inProcess(args);
    expect(code).toBe(125);
    expect(stdout).toBe("");
    expect(stderr).toContain(message);
    expect(stderr.split("\n")).toEqual([
      expect.stringMatching(/^x-guard: /),
      "Try 'x-guard --help' for more information.",
      "",
    ]);
  });

  it("parses options first, durations to ms and sizes to bytes; -- or the first non-option starts the command", () => {
    expect(
      parseGuardArgs(["--timeout=1.5m", "--grace", "2", "--max-memory", "1.5GiB", "ls", "--timeout", "x"]),
    ).toEqual({
      timeoutMs: 90_000,
      gracePeriodMs: 2_000,
      maxMemoryBytes: 1.5 * 1024 ** 3,
      sendKill: false,
      preserveStatus: false,
      foreground: false,
      verbose: false,
      untimed: false,
      progressOnOutput: false,
      help: false,
      version: false,
      command: ["ls", "--timeout", "x"],
    });
    // timeout(1)'s command line: -s and -k (also attached), and a leading DURATION when --timeout is absent
    expect(parseGuardArgs(["-s", "int", "-k5", "1.5m", "sleep", "9"])).toMatchObject({
      signal: constants.signals.SIGINT,
      killAfterMs: 5_000,
      timeoutMs: 90_000,
      command: ["sleep", "9"],
    });
    const untimed = parseGuardArgs(["-sKILL", "--kill-after=0", "0", "true"]);
    expect(untimed).toMatchObject({ signal: constants.signals.SIGKILL, untimed: true, command: ["true"] });
    expect(untimed.timeoutMs).toBeUndefined(); // DURATION 0 and -k 0 disable, as in timeout(1)
    expect(untimed.killAfterMs).toBeUndefined();
    expect(parseGuardArgs(["--signal", "9", "--preserve-status", ".5", "x"])).toMatchObject({
      signal: constants.signals.SIGKILL,
      preserveStatus: true,
      timeoutMs: 500,
      command: ["x"],
    });
    expect(parseGuardArgs(["--signal=SIGHUP", "--timeout", "5", "10", "x"])).toMatchObject({
      signal: constants.signals.SIGHUP,
      timeoutMs: 5_000,
      command: ["10", "x"], // with --timeout, the first non-option is the command
    });
    expect(
      parseGuardArgs(["--send-kill", "--progress-on-output", "--timeout", "1", "--", "-x"]),
    ).toMatchObject({
      sendKill: true,
      progressOnOutput: true,
      command: ["-x"],
    });
    for (const size of ["1G", "1024M", "1048576K", "1073741824", "1gb", "1GiB"]) {
      expect(parseGuardArgs(["--max-memory", size]).maxMemoryBytes).toBe(1024 ** 3);
    }
    expect(parseGuardArgs(["--max-memory", "512"]).maxMemoryBytes).toBe(512); // a bare number is bytes
    for (const [text, ms] of [
      ["0.5", 500],
      ["30s", 30_000],
      ["2h", 7_200_000],
      ["1d", 86_400_000],
    ] as const) {
      expect(parseGuardArgs(["--timeout", text]).timeoutMs).toBe(ms);
    }
  });
});

describe("x-guard: exit status", () => {
  it("is the command's own, and the command gets stdin and arguments untouched", async () => {
    expect((await run(["--timeout", "5", "--", "sh", "-c", "exit 7"])).code).toBe(7);
    const echoed = await run(["--timeout=5", "cat"], "hello\n");
    expect(echoed).toMatchObject({ code: 0, stdout: "hello\n" });
    const args = await run(["--timeout", "5", "--", "sh", "-c", 'echo "$@"', "sh", "--timeout", "x", "--"]);
    expect(args.stdout).toBe("--timeout x --\n");
  });

  // sh starts in a few ms, so the limits can be short; the loop handles traps between sleeps
  const trapping = (onTerm: string) =>
    `trap "echo INT" INT; trap "${onTerm}" TERM; echo ready; while :; do sleep 0.05; done`;

  it("is 124 when the time limit stopped the command, however it then ended, with a line per signal with -v", async () => {
    const result = await run([
      "-v",
      "--timeout",
      "0.5",
      "--grace",
      "1",
      "--",
      "sh",
      "-c",
      trapping("echo TERM; exit 5"),
    ]);
    expect(result.code).toBe(124);
    expect(result.stdout).toBe("ready\nINT\nTERM\n");
    // (sh itself may report its `sleep` as "Terminated")
    const lines = result.stderr.split("\n").filter((line) => line.startsWith("x-guard:"));
    expect(lines).toHaveLength(2);
    expect(lines).toEqual([
      "x-guard: sending signal INT to command 'sh'",
      "x-guard: sending signal TERM to command 'sh'",
    ]);
    const quits = await run([
      "--timeout",
      "0.5",
      "--",
      "sh",
      "-c",
      "trap 'exit 0' INT; while :; do sleep 0.05; done",
    ]);
    expect(quits.code).toBe(124);
    expect(quits.stderr).toBe(""); // quiet without -v, as timeout(1)
  });

  it("takes timeout(1)'s suffixes and, with --send-kill, sends SIGKILL last; still 124", async () => {
    const result = await run([
      "--verbose",
      "--timeout",
      "0.01m",
      "--grace",
      "0.2s",
      "--send-kill",
      "--",
      "sh",
      "-c",
      trapping("echo TERM"),
    ]);
    expect(result.code).toBe(124);
    expect(result.stdout).toBe("ready\nINT\nTERM\n");
    expect(result.stderr).toContain("x-guard: sending signal TERM to command 'sh'\n");
    expect(result.stderr).toContain("x-guard: sending signal KILL to command 'sh'\n");
  });

  it("is 122 when the memory limit stopped the command (tree of the command)", async () => {
    const result = await run([
      "-v",
      "--max-memory",
      "64M",
      "--timeout",
      "30",
      "--signal=INT",
      "--",
      node,
      signalLogger,
      "--allocate-mb",
      "128",
      "--exit-on",
      "SIGINT",
    ]);
    expect(result.code).toBe(122);
    expect(result.stderr).toMatch(
      /^x-guard: memory limit exceeded: .*\nx-guard: sending signal INT to command /,
    );
  });

  it("is 128 + n when the command died of a signal x-guard did not send", async () => {
    expect((await run(["--timeout", "5", "--", "sh", "-c", "kill -USR1 $$"])).code).toBe(138);
  });

  it("is 127 for a command that is not found and 126 for one that cannot be run", async () => {
    const missing = await run(["--timeout", "5", "--", "no-such-command-x-guard"]);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toBe(
      "x-guard: failed to run command 'no-such-command-x-guard': No such file or directory\n",
    );
    const notExecutable = join(dir, "plain.txt");
    await writeFile(notExecutable, "echo hi\n");
    await chmod(notExecutable, 0o644);
    for (const command of [dir, notExecutable]) {
      const result = await run(["--timeout", "5", "--", command]);
      expect(result.code).toBe(126);
      expect(result.stderr).toBe(`x-guard: failed to run command '${command}': Permission denied\n`);
    }
  });

  it("lets a command within a generous memory limit finish", async () => {
    expect((await run(["--max-memory", "1G", "--", "true"])).code).toBe(0);
  });
});

describe("x-guard: timeout(1)'s command line, compared with the real timeout", () => {
  /** Runs a program to its end: its exit status as a shell reports it (128 + n after signal n), output, time. */
  function status(file: string, args: string[]) {
    const started = performance.now();
    const child = spawn(file, args, { cwd: packageDir, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.resume();
    return new Promise<{ status: number; stdout: string; ms: number }>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code, signal) => {
        const ms = performance.now() - started;
        resolve({ status: code ?? 128 + constants.signals[signal!], stdout, ms });
      });
    });
  }

  /** The same arguments to timeout(1) and to x-guard, side by side. */
  async function compare(args: string[]) {
    const [gnu, ours] = await Promise.all([
      status("timeout", args),
      status(node, ["--import", "tsx", "--conditions=@x/source", cli, ...args]),
    ]);
    expect(ours.status).toBe(gnu.status);
    expect(ours.stdout).toBe(gnu.stdout);
    return { gnu, ours };
  }

  const loop = "while :; do sleep 0.05; done";

  it("sends TERM at the deadline, not SIGINT and a 15 s grace: 124 within seconds", async () => {
    const trapsInt = ["sh", "-c", 'trap "" INT; sleep 30'];
    const { ours } = await compare(["1", ...trapsInt]);
    expect(ours.status).toBe(124);
    expect(ours.ms).toBeLessThan(12_000); // timeout(1): 1 s; x-guard sent SIGINT, then SIGTERM 15 s later
    const spelled = await status(node, [
      "--import",
      "tsx",
      "--conditions=@x/source",
      cli,
      "--timeout",
      "1",
      "--",
      ...trapsInt,
    ]);
    expect(spelled.status).toBe(124);
    expect(spelled.ms).toBeLessThan(12_000);
  });

  it("-s: the first signal, as the command sees it; --preserve-status: the command's own status", async () => {
    const command = [
      "sh",
      "-c",
      `trap "echo INT; exit 3" INT; trap "echo TERM; exit 4" TERM; echo ready; ${loop}`,
    ];
    // 1 s: room for sh to set its traps on a loaded machine
    const { ours } = await compare(["-s", "INT", "1", ...command]);
    expect(ours).toMatchObject({ status: 124, stdout: "ready\nINT\n" });
    const preserved = await compare(["--preserve-status", "-s", "SIGINT", "1", ...command]);
    expect(preserved.ours.status).toBe(3);
    expect((await compare(["-s", "9", "0.5", "sleep", "10"])).ours.status).toBe(137);
  });

  it("-k: KILL that long after the first signal, and 137 as timeout(1) reports a killed command", async () => {
    const { ours } = await compare(["-k", "0.5", "1", "sh", "-c", `trap "" TERM; echo ready; ${loop}`]);
    expect(ours.status).toBe(137);
    expect(ours.ms).toBeLessThan(12_000);
  });

  it("the command's own status otherwise, 0 as no limit, 126 and 127", async () => {
    expect((await compare(["5", "sh", "-c", "exit 7"])).ours.status).toBe(7);
    expect((await compare(["0", "sh", "-c", "sleep 0.2; exit 4"])).ours.status).toBe(4);
    expect((await compare(["5", "sh", "-c", "kill -USR1 $$"])).ours.status).toBe(138);
    expect((await compare(["5", "no-such-command-x-guard"])).ours.status).toBe(127);
    expect((await compare(["5", dir])).ours.status).toBe(126);
  });
});

describe("x-guard: --progress-on-output", () => {
  const chatty = [
    node,
    "-e",
    "let n = 0; const t = setInterval(() => { process.stdout.write('line ' + n + '\\n'); process.stderr.write('e'); if (++n === 8) clearInterval(t); }, 200);",
  ];

  it("restarts the time limit on every chunk and copies the output byte for byte", async () => {
    const result = await run(["--timeout", "0.6", "--progress-on-output", "--", ...chatty]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(Array.from({ length: 8 }, (_, n) => `line ${n}\n`).join(""));
    expect(result.stderr).toBe("eeeeeeee");
  });

  it("without it the same command times out", async () => {
    expect((await run(["--timeout", "0.6", "--", ...chatty])).code).toBe(124);
  });
});

describe("x-guard: a closed output (`x-guard … | head`)", () => {
  const throughPipe = (args: string[], stream: "stdout" | "stderr", reader: string) =>
    runThroughPipe(cli, args, stream, reader);

  it("a command printing a lot meets the broken pipe itself: x-guard exits 141, no stack trace", async () => {
    const result = await throughPipe(["--timeout", "30", "--", "yes"], "stdout", "head -c 100000 >/dev/null");
    expect(result.other).toBe(""); // x-guard's stderr
    expect(result.status).toBe(141); // yes died of SIGPIPE: 128 + 13
  });

  it("with --progress-on-output the copy stops and the command meets the broken pipe: 141 at once, not the limit", async () => {
    const result = await throughPipe(
      ["--timeout", "10", "--progress-on-output", "--", "yes"],
      "stdout",
      "head -c 100000 >/dev/null",
    );
    expect(result.other).toBe("");
    expect(result.status).toBe(141);
    expect(result.ms).toBeLessThan(8_000); // it used to stall until the 10 s limit, then exit 124
  });

  it("never ends while the command runs: with its stderr closed it still takes the command through the ladder", async () => {
    const result = await throughPipe(
      [
        "--timeout",
        "0.3",
        "--grace",
        "0.3",
        "--send-kill",
        "--",
        "sh",
        "-c",
        'trap "" INT TERM; echo $$; exec >/dev/null; while :; do sleep 0.05; done',
      ],
      "stderr",
      "true",
    );
    expect(result.status).toBe(124); // not 1 (a crash on EPIPE) nor 141 (a quiet exit leaving sh running)
    const pid = Number(result.other.trim());
    expect(pid).toBeGreaterThan(0);
    expect(await goneWithin(pid, 2_000)).toBe(true);
  });
});

describe("x-guard: signals", () => {
  it("forwards SIGTERM to the command's group and exits with the command's status", async () => {
    const guard = xGuard(["--timeout", "30", "--", node, signalLogger]);
    await waitForOutput(guard, '"ready":true');
    guard.child.kill("SIGTERM");
    const result = await guard.done;
    expect(result.stdout).toContain('"signal":"SIGTERM"');
    expect(result.code).toBe(3);
  });

  it.each([
    ["SIGINT", 130],
    ["SIGHUP", 129],
    ["SIGQUIT", 131],
  ] as const)(
    "gives 128 + n when the command dies of the forwarded signal, as timeout(1): %s, %i",
    async (signal, status) => {
      // The process that prints "started" is the one that dies: with `sh -c "echo …; exec sleep"`, a signal
      // between the echo and the exec met the shell instead, and under load the test timed out.
      const guard = xGuard([
        "--timeout",
        "30",
        "--",
        node,
        "-e",
        'console.log("started"); setTimeout(() => {}, 30_000);',
      ]);
      await waitForOutput(guard, "started");
      guard.child.kill(signal);
      expect((await guard.done).code).toBe(status);
    },
  );

  it("sends SIGKILL on a second signal 1 s or more after the first", async () => {
    const guard = xGuard(["--timeout", "30", "--", node, signalLogger, "--ignore"]);
    await waitForOutput(guard, '"ready":true');
    guard.child.kill("SIGINT");
    await waitForOutput(guard, '"signal":"SIGINT"');
    await delay(STOP_REQUEST_WINDOW_MS); // measured from when x-guard took the first, before it forwarded it
    guard.child.kill("SIGINT");
    const result = await guard.done;
    expect(result.code).toBe(137);
  });

  it("neither forwards nor forces on signals soon after the first (Ctrl-C, then a parent's SIGTERM)", async () => {
    const guard = xGuard(["--timeout", "30", "--", node, signalLogger, "--ignore"]);
    await waitForOutput(guard, '"ready":true');
    // Ctrl-C reaches x-guard (as timeout(1) does: the pid, then the group) and a parent forwards a SIGTERM.
    for (const signal of ["SIGINT", "SIGINT", "SIGTERM"] as const) guard.child.kill(signal);
    await waitForOutput(guard, '"signal":');
    await delay(STOP_REQUEST_WINDOW_MS);
    expect(guard.child.exitCode).toBeNull(); // x-guard and the command run on
    guard.child.kill("SIGINT"); // a signal after the window forces
    const result = await guard.done;
    expect(result.code).toBe(137);
    expect(result.stdout.match(/"signal":/g)).toHaveLength(1); // one of the three was forwarded
  });

  it.each(["SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"] as const)(
    "forwards %s to the command's whole group, every time, and the time limit still applies afterwards",
    async (signal) => {
      const guard = xGuard(["-v", "--timeout", "4", "--grace", "0.3", "--send-kill", "--", ...loggers]);
      const log = collect(guard.child);
      const pids = await bothReady(log);
      const got = (pid: number, name: string) =>
        log.entries.filter((e) => e.pid === pid && e.signal === name);
      for (const times of [1, 2]) {
        guard.child.kill(signal);
        await log.waitFor(() => pids.every((pid) => got(pid, signal).length === times));
      }
      const result = await guard.done; // x-guard lived on, and the ladder ran: SIGINT, SIGTERM, SIGKILL
      expect(result.code).toBe(124); // x-guard's three steps: 124 however the command then ended
      const ladder = result.stderr.split("\n").filter((line) => line.startsWith("x-guard:"));
      expect(ladder.map((line) => /sending signal \w+/.exec(line)?.[0])).toEqual([
        "sending signal INT",
        "sending signal TERM",
        "sending signal KILL",
      ]);
      for (const pid of pids) {
        expect(got(pid, "SIGINT")).toHaveLength(1);
        expect(got(pid, "SIGINT")[0]!.at).toBeGreaterThan(got(pid, signal)[1]!.at);
        expect(await goneWithin(pid, 2_000)).toBe(true);
      }
    },
  );

  it("forwards a signal sent the moment the command starts: it listens before the spawn", async () => {
    // The command's first act signals x-guard ($PPID): a closed terminal can do the same to a just-started
    // job. x-guard must forward it (the command's trap exits 3), not die of it (its reaper's SIGKILL: 137).
    const command = 'trap "exit 3" HUP; kill -HUP $PPID; while :; do sleep 0.05; done';
    for (let i = 0; i < 3; i++) {
      const result = await run(["--timeout", "20", "--", "sh", "-c", command]);
      expect(result.code).toBe(3);
    }
  });

  it("leaves a command's background jobs alone when nobody signalled it: its reaper got done before x-guard exited", async () => {
    const result = await run(["--timeout", "30", "--", "sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"]);
    expect(result.code).toBe(0);
    const sleep = Number(result.stdout.trim());
    cleanupAfterTest({ pid: sleep });
    await delay(500); // what a reaper that missed its done would have done by now
    expect(isAlive(sleep)).toBe(true);
  });

  it("after its terminal hangs up, forwards the SIGHUP and still takes the command through the ladder", async () => {
    // x-guard runs in a real terminal that script(1) makes, as the session leader; killing script closes the
    // terminal: the kernel sends x-guard SIGHUP, and every later write of its `x-guard: …` lines fails with EIO
    const log = join(dir, "hangup.log");
    const guardPid = join(dir, "hangup.pid");
    const command = `trap "echo HUP >> ${log}" HUP; trap "echo INT >> ${log}" INT; trap "echo TERM >> ${log}" TERM; echo $$ >> ${log}; while :; do sleep 0.1; done`;
    const guard = [
      node,
      "--import",
      "tsx",
      "--conditions=@x/source",
      cli,
      "--timeout",
      "3",
      "--grace",
      "0.3",
    ];
    const inner = `echo $$ > ${guardPid}; exec ${[...guard, "--send-kill", "--", "sh", "-c", command].map(quote).join(" ")}`;
    const terminal = spawn("script", ["-q", "-c", inner, "/dev/null"], {
      cwd: packageDir,
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
    cleanupAfterTest(terminal);
    const read = async (file: string) => (await readFile(file, "utf8").catch(() => "")).trim();
    const lines = async () => (await read(log)).split("\n").filter(Boolean);
    const pid = Number(await eventually(async () => (await lines())[0] ?? "", "the command started"));
    cleanupAfterTest({ pid });
    const xGuardPid = Number(await read(guardPid));
    expect(xGuardPid).toBeGreaterThan(0);
    terminal.kill("SIGKILL"); // the terminal hangs up
    await eventually(async () => ((await lines()).includes("TERM") ? "yes" : ""), "the ladder's SIGTERM");
    // x-guard lived through the hangup and its failed writes: no crash on EIO, no SIGKILL by its reaper first
    expect((await lines()).slice(1, 4)).toEqual(["HUP", "INT", "TERM"]);
    expect(await goneWithin(xGuardPid, 10_000)).toBe(true); // after level 2 (SIGKILL), x-guard ends
    expect(await goneWithin(pid, 2_000)).toBe(true);
  });

  it("sweeps the group after the command exits, so its background jobs do not outlive it", async () => {
    // node needs a few hundred ms to start under load: a limit that leaves room for its handlers
    const result = await run([
      "--timeout",
      "3",
      "-s",
      "INT",
      "--",
      node,
      signalLogger,
      "--grandchild",
      "--exit-on",
      "SIGINT",
    ]);
    expect(result.code).toBe(124);
    const pids = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.ready)
      .map((entry) => entry.pid as number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await goneWithin(pid, 2_000)).toBe(true);
  });
});

/** The signal logger with a grandchild in its group, both logging every signal and exiting on none. */
const loggers = [node, signalLogger, "--grandchild", "--ignore"];

/** Waits until both loggers are ready; resolves with their pids. */
async function bothReady(log: Logged): Promise<number[]> {
  const ready = () => log.entries.filter((entry) => entry.ready === true).map((entry) => entry.pid);
  await log.waitFor(() => ready().length === 2, 30_000);
  cleanupAfterTest({ pid: pgidOf(ready()[0]!) as number }); // their group, should x-guard die
  return ready();
}

/** Polls `get` until it resolves with a non-empty string, for up to 20 s. */
async function eventually(get: () => Promise<string>, what: string): Promise<string> {
  const end = Date.now() + 20_000;
  for (let value = await get(); ; value = await get()) {
    if (value !== "") return value;
    if (Date.now() > end) throw new Error(`not within 20 s: ${what}`);
    await delay(50);
  }
}

function waitForOutput(guard: ReturnType<typeof xGuard>, text: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = "";
    guard.child.stdout!.on("data", (chunk) => {
      seen += chunk;
      if (seen.includes(text)) resolve();
    });
  });
}
