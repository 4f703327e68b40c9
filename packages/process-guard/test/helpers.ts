import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { onTestFinished } from "vitest";

export const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
export const packageDir = fileURLToPath(new URL("../", import.meta.url));
export const signalLogger = `${fixtures}signal-logger.mjs`;

/** One JSON line a fixture printed, with the test's own arrival time (ms since `started`). */
export interface Entry {
  at: number;
  t: number;
  pid: number;
  signal?: string;
  message?: { type: string; reason: string; level: number };
  ready?: boolean;
  [key: string]: unknown;
}

/** A child process whose JSON stdout lines are collected as they arrive. */
export interface Logged {
  child: ChildProcess;
  entries: Entry[];
  started: number;
  /** Resolves with the first entry matching `test`. */
  waitFor(test: (entry: Entry) => boolean, timeoutMs?: number): Promise<Entry>;
  /** Resolves once stdout is closed: every line the process (and its children) wrote has been read. */
  closed: Promise<void>;
}

/** Starts `node signal-logger.mjs args` (or another fixture) and collects its log lines. */
export function startLogger(args: string[] = [], options: SpawnOptions = {}, script = signalLogger): Logged {
  const child = spawn(process.execPath, [script, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    ...options,
  });
  return collect(child);
}

/** Collects the JSON lines of `child.stdout`. */
export function collect(child: ChildProcess): Logged {
  const started = performance.now();
  const entries: Entry[] = [];
  const waiters = new Set<() => void>();
  let buffer = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    buffer += chunk;
    let nl = buffer.indexOf("\n");
    while (nl !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf("\n");
      try {
        entries.push({ ...JSON.parse(line), at: performance.now() - started });
      } catch {
        entries.push({ at: performance.now() - started, t: 0, pid: 0, text: line });
      }
      for (const waiter of waiters) waiter();
    }
  });
  const waitFor = (test: (entry: Entry) => boolean, timeoutMs = 10_000) =>
    new Promise<Entry>((resolve, reject) => {
      const check = () => {
        const found = entries.find(test);
        if (found) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no matching entry within ${timeoutMs} ms; got ${JSON.stringify(entries)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  const closed = new Promise<void>((resolve) => {
    if (!child.stdout) resolve();
    else child.stdout.once("close", () => resolve());
  });
  return { child, entries, started, waitFor, closed };
}

/** Resolves once the child has exited. */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/** Kills a child (or a bare pid) and, when it leads one, its process group; for test cleanup. */
export function cleanup(child: Pick<ChildProcess, "pid"> | undefined): void {
  if (child?.pid === undefined) return;
  for (const pid of [-child.pid, child.pid]) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // not a group leader, or gone already
    }
  }
}

/** Kills `child` (or a bare pid) and the group it leads, with {@link cleanup}, when the test finishes. */
export function cleanupAfterTest(child: Pick<ChildProcess, "pid">): void {
  onTestFinished(() => cleanup(child));
}

/** How a Node process ended, and what it printed. */
export interface Finished {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Starts a TypeScript module file in a fresh Node process (tsx, @x/source condition). */
export function startTs(
  file: string,
  args: string[] = [],
  options: SpawnOptions & { input?: string } = {},
): { child: ChildProcess; done: Promise<Finished> } {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@x/source", file, ...args], {
    cwd: packageDir,
    stdio: ["pipe", "pipe", "pipe"],
    ...options,
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  else child.stdin?.end();
  const done = new Promise<Finished>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

/** `word` quoted for a POSIX shell. */
export const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * Runs a TypeScript module file under bash with a real pipe, as a shell makes it: `file args | reader` (stdout)
 * or `file args 2> >(reader)` (stderr). Resolves with its exit status, what reached its other stream, and how
 * long it took. Its process group is killed when the test finishes.
 */
export async function runThroughPipe(
  file: string,
  args: string[],
  stream: "stdout" | "stderr",
  reader: string,
): Promise<{ status: number; other: string; ms: number }> {
  const line = [process.execPath, "--import", "tsx", "--conditions=@x/source", file, ...args]
    .map(quote)
    .join(" ");
  const script =
    stream === "stdout"
      ? `${line} | ${reader}; echo "status=\${PIPESTATUS[0]}" >&2`
      : `${line} 2> >(${reader}); echo "status=$?"`;
  const started = performance.now();
  const bash = spawn("bash", ["-c", script], {
    cwd: packageDir,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  cleanupAfterTest(bash);
  let stdout = "";
  let stderr = "";
  bash.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  bash.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  await new Promise((resolve) => bash.once("close", resolve));
  const other = stream === "stdout" ? stderr : stdout;
  const status = /status=(\d+)\n$/.exec(other);
  return {
    status: Number(status?.[1]),
    other: other.slice(0, status?.index),
    ms: performance.now() - started,
  };
}

/** Runs a TypeScript module file in a fresh Node process and resolves when it has ended. */
export function runTs(file: string, args: string[] = [], options: SpawnOptions & { input?: string } = {}) {
  return startTs(file, args, options).done;
}

/** Whether `pid` is gone (a zombie counts) within `ms`: a killed process takes a moment to become one. */
export async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const { isAlive } = await import("../src/process-info.js");
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (!isAlive(pid)) return true;
    await delay(20);
  }
  return !isAlive(pid);
}

/** The JSON lines a process printed. */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Sleeps `ms` (real timers). */
export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Spins the event loop's thread for `ms`: synchronous work the guards cannot see until it ends. */
export function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

/** The running (not zombie) members of process group `pgid`, from `/proc`. */
export function runningMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(group) === pgid && state !== "Z") members.push(Number(name));
    } catch {
      // gone between readdir and read
    }
  }
  return members;
}

/** Whether process group `pgid` exists (`kill(-pgid, 0)`: a zombie member still counts). */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Resolves with the ms it took until `test()` held, or rejects after `ms`. */
export async function until(test: () => boolean, ms: number, what: string): Promise<number> {
  const started = performance.now();
  while (!test()) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await delay(20);
  }
  return performance.now() - started;
}

/** The pid of a reaper (`sh -c … x-guard-reaper`) that process `parent` started, if one runs. */
export function reaperOf(parent: number): number | undefined {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (argv[3] !== "x-guard-reaper") continue;
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent) return Number(name);
    } catch {
      // gone between readdir and read
    }
  }
  return undefined;
}

/** A promise the test resolves when it wants: a task that ignores its signal until then. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
