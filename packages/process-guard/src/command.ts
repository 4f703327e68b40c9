/**
 * x-guard: run a command under a time and/or memory limit, like `timeout(1)` with a memory guard and an
 * escalation ladder. See `x-guard --help` and the README.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { ExitCode, onShutdownSignals, signalExitCode } from "@x/core";
import { type MemGuard, memGuard, type TimeGuard, timeGuard, type WatchHandle } from "./guard.js";
import { isCode } from "./process-info.js";
import { parseDuration, parseSize } from "./units.js";

const usage = `Usage: x-guard [options] [--] <command> [args…]

Runs <command> in its own process group under a time and/or memory limit. When a limit is
reached, the whole group gets SIGINT, then SIGTERM after the grace period, then SIGTERM again
(or SIGKILL with --send-kill); each step is reported on stderr.

Options:
  --timeout S           time limit in seconds (fractions allowed; s, m, h or d suffix as in timeout(1))
  --grace S             seconds between escalation levels (default 15 for time, 5 for memory)
  --max-memory SIZE     limit on the resident memory of the command and all its descendants;
                        bytes with an optional K, M or G suffix (×1024): 512M, 1.5G, 100KiB
  --send-kill           the last level sends SIGKILL instead of SIGTERM
  --progress-on-output  restart the time limit whenever the command writes to stdout or stderr
  -h, --help            show this help

At least one of --timeout and --max-memory is required.

Exit status:
  124  the time limit was reached (whatever happened next)
  125  the memory limit was exceeded
  126  the command cannot be run
  127  the command was not found
  64   usage error
  128+n  the command died of signal n (not sent by x-guard as a guard)
  otherwise the command's own exit status

A first SIGINT or SIGTERM to x-guard is forwarded to the command's process group; a second sends SIGKILL.
`;

/** Exit statuses of x-guard. */
export const GuardExit = {
  TIMEOUT: 124,
  MEMORY: 125,
  CANNOT_RUN: 126,
  NOT_FOUND: 127,
  USAGE: ExitCode.USAGE,
  FAILURE: ExitCode.FAILURE,
} as const;

class Usage extends Error {}

/** The parsed command line. */
export interface GuardCommandLine {
  timeout?: number;
  grace?: number;
  maxMemoryBytes?: number;
  sendKill: boolean;
  progressOnOutput: boolean;
  help: boolean;
  command: string[];
}

/**
 * Parses x-guard's arguments: options first; `--` or the first non-option starts the command, and everything
 * after it is the command's (`util.parseArgs` would go on reading options after a positional).
 */
export function parseGuardArgs(args: string[]): GuardCommandLine {
  const line: GuardCommandLine = { sendKill: false, progressOnOutput: false, help: false, command: [] };
  let i = 0;
  const value = (name: string, inline: string | undefined): string => {
    if (inline !== undefined) return inline;
    const next = args[++i];
    if (next === undefined) throw new Usage(`option ${name} needs a value`);
    return next;
  };
  const parsed = <T>(name: string, text: string, parse: (text: string) => T): T => {
    try {
      return parse(text);
    } catch (error) {
      throw new Usage(`${name}: ${(error as Error).message}`);
    }
  };
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      line.command = args.slice(i + 1);
      return line;
    }
    if (!arg.startsWith("-") || arg === "-") {
      line.command = args.slice(i);
      return line;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const flag = (): true => {
      if (inline !== undefined) throw new Usage(`option ${name} takes no value`);
      return true;
    };
    switch (name) {
      case "--timeout":
        line.timeout = parsed(name, value(name, inline), parseDuration);
        break;
      case "--grace":
        line.grace = parsed(name, value(name, inline), parseDuration);
        break;
      case "--max-memory":
        line.maxMemoryBytes = parsed(name, value(name, inline), parseSize);
        break;
      case "--send-kill":
        line.sendKill = flag();
        break;
      case "--progress-on-output":
        line.progressOnOutput = flag();
        break;
      case "-h":
      case "--help":
        line.help = flag();
        return line;
      default:
        throw new Usage(`unknown option ${name}`);
    }
  }
  return line;
}

/** Copies a piped child stream to ours byte for byte, calling `onChunk` for each chunk; respects backpressure. */
function copy(from: Readable, to: Writable, onChunk: () => void): Promise<void> {
  return new Promise((resolve) => {
    from.on("data", (chunk: Buffer) => {
      onChunk();
      if (!to.write(chunk)) {
        from.pause();
        to.once("drain", () => from.resume());
      }
    });
    from.once("close", () => resolve());
    from.once("error", () => resolve());
  });
}

/**
 * Runs x-guard with `args` and resolves with the exit status (it does not exit the process).
 *
 * @param args - the arguments after `x-guard`
 */
export async function runGuardCommand(args: string[]): Promise<number> {
  const stderr = process.stderr;
  let line: GuardCommandLine;
  try {
    line = parseGuardArgs(args);
    if (!line.help) {
      if (line.timeout === undefined && line.maxMemoryBytes === undefined) {
        throw new Usage("give --timeout or --max-memory (or both)");
      }
      if (line.command.length === 0) throw new Usage("no command given");
    }
  } catch (error) {
    if (!(error instanceof Usage)) throw error;
    stderr.write(`x-guard: ${error.message}\n\n${usage}`);
    return GuardExit.USAGE;
  }
  if (line.help) {
    process.stdout.write(usage);
    return 0;
  }

  const { sendKill } = line;
  const time =
    line.timeout === undefined
      ? undefined
      : timeGuard({
          timeout: line.timeout,
          gracePeriod: line.grace,
          interruptType: "signal",
          sendKill,
          checkInterval: 100,
        });
  const memory =
    line.maxMemoryBytes === undefined
      ? undefined
      : memGuard({
          maxMemoryBytes: line.maxMemoryBytes,
          metric: "tree",
          gracePeriod: 0,
          secondaryGracePeriod: line.grace,
          interruptType: "signal",
          sendKill,
          checkInterval: 100,
        });

  const state: RunState = { forwarded: false };
  time?.on("interrupt", ({ level, error, action }) => {
    state.decided ??= GuardExit.TIMEOUT;
    stderr.write(`x-guard: time limit reached (level ${level}): ${action} [${error.message}]\n`);
  });
  memory?.on("interrupt", ({ level, error, action }) => {
    state.decided ??= GuardExit.MEMORY;
    stderr.write(`x-guard: memory limit exceeded (level ${level}): ${action} [${error.message}]\n`);
  });

  // Signal handlers go in before the command starts, with the toolkit's convention: the first SIGINT or
  // SIGTERM is forwarded to the command's group as it is, a second one forces with SIGKILL.
  const toGroup = (signal: NodeJS.Signals) => {
    state.forwarded = true;
    const { child } = state;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone
    }
  };
  const removeHandlers = onShutdownSignals(toGroup, { force: () => toGroup("SIGKILL") });
  try {
    return await supervise(line, time, memory, state);
  } finally {
    removeHandlers();
  }
}

/** What x-guard knows while the command runs. */
interface RunState {
  child?: ChildProcess;
  /** SIGINT or SIGTERM was forwarded to the group. */
  forwarded: boolean;
  /** 124 or 125, once a guard has sent a level. */
  decided?: number;
}

/** Runs the command under the guards and returns x-guard's exit status. */
async function supervise(
  line: GuardCommandLine,
  time: TimeGuard | undefined,
  memory: MemGuard | undefined,
  state: RunState,
): Promise<number> {
  const stderr = process.stderr;
  const [file, ...rest] = line.command as [string, ...string[]];
  const piped = line.progressOnOutput;
  const output = piped ? "pipe" : "inherit";
  const child = spawn(file, rest, { detached: true, stdio: ["inherit", output, output] });
  state.child = child;

  const spawned = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    child.once("spawn", () => resolve(undefined));
    child.once("error", (error) => resolve(error));
  });
  if (spawned !== undefined) {
    if (isCode(spawned, "ENOENT")) {
      stderr.write(`x-guard: ${file}: command not found\n`);
      return GuardExit.NOT_FOUND;
    }
    stderr.write(`x-guard: ${file}: cannot run: ${spawned.message}\n`);
    return GuardExit.CANNOT_RUN;
  }

  const handles: WatchHandle[] = [];
  const timeHandle = time?.watch(child);
  if (timeHandle) handles.push(timeHandle);
  if (memory) handles.push(memory.watch(child));

  const copies: Promise<void>[] = [];
  if (piped) {
    const onChunk = () => timeHandle?.progress();
    process.stdout.on("error", () => {});
    copies.push(copy(child.stdout!, process.stdout, onChunk), copy(child.stderr!, process.stderr, onChunk));
  }

  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  await Promise.all(handles);
  // a forwarded signal counts as sent for the sweep: background jobs must not outlive the command
  if (state.forwarded) {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // nothing left in the group
    }
  }
  if (copies.length > 0) await drain(copies, [child.stdout!, child.stderr!]);

  if (state.decided !== undefined) return state.decided;
  if (exit.code !== null) return exit.code;
  return signalExitCode(exit.signal!);
}

/**
 * Waits for the remaining output, but not for ever: a background process may hold the pipes open after the
 * command exited. Gives up after 500 ms without a chunk.
 */
async function drain(copies: Promise<void>[], streams: Readable[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<void>((resolve) => {
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(resolve, 500);
    };
    arm();
    for (const stream of streams) stream.on("data", arm);
  });
  await Promise.race([Promise.all(copies), idle]);
  clearTimeout(timer);
  for (const stream of streams) stream.destroy();
}
