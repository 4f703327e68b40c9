import type { ChildProcess, StdioOptions } from "node:child_process";
import type { Logger } from "@x/core";
import { loggerOption, MAX_DURATION_MS, optionError, signalExitCode, v } from "@x/core/internal";
import { ErrorCode, GuardError } from "./errors.js";
import { GuardedExitCode } from "./exit-codes.js";
import {
  type ForwardedSignal,
  forwardedSignals,
  forwardSignalsOption,
  listenAndForward,
} from "./forward-signals.js";
import { type InterruptEvent, type MemGuard, memGuard, type TimeGuard, timeGuard } from "./guard.js";
import { hasControllingTerminal, launch, launcherAvailable } from "./launcher.js";
import { waitLong } from "./long-timer.js";
import { bool, bytes, duration, InterruptType, interval, nonNegative, parse } from "./options.js";
import { copyOutput, drainOutput } from "./output-copy.js";
import { isCode, ownSession, procfsShowsOurPids } from "./process-info.js";
import { startReaper } from "./reaper.js";
import type { TimeWatchHandle, WatchHandle } from "./watch-target.js";

const { spawn } = process.getBuiltinModule("node:child_process");
const { constants } = process.getBuiltinModule("node:os");

export { forwardedSignals, GuardedExitCode };

/** Which limit stopped a command. */
export type GuardedLimit = "time" | "memory";

/** An `"interrupt"` event of one of the command's guards, with the limit it belongs to. */
export interface GuardedInterruptEvent extends InterruptEvent {
  limit: GuardedLimit;
}

/** Options of {@link runGuardedCommand}. At least one limit is usual, none is allowed (then only `signal` stops). */
export interface GuardedCommandOptions {
  /**
   * Time limit, in ms: any finite length (one longer than a Node timer can wait, about 24.8 days, is waited for
   * in steps). Default: none.
   */
  timeoutMs?: number;
  /** Limit on the resident memory of the command and all its descendants, in bytes. Default: none. */
  maxMemoryBytes?: number;
  /**
   * Time between escalation levels, in ms: after the time limit, after a stop by `signal`, and between the
   * memory guard's later levels. Default 15 000 ms (5 000 ms between the memory guard's levels). Not with
   * `killSignal` or `killAfterMs`.
   */
  gracePeriodMs?: number;
  /** The last level sends SIGKILL instead of SIGTERM. Default `false`. Not with `killSignal` or `killAfterMs`. */
  sendKill?: boolean;
  /**
   * `timeout(1)`'s ladder instead of the three steps: the signal a limit, or a stop by `signal`, sends to the
   * group first (`timeout -s`), then SIGKILL `killAfterMs` later if that is given, and nothing more. Giving
   * either option chooses this ladder; `killSignal` then defaults to `"SIGTERM"`, as in `timeout(1)`.
   * Default: the three steps (SIGINT, SIGTERM after `gracePeriodMs`, then SIGTERM or SIGKILL).
   */
  killSignal?: NodeJS.Signals | number;
  /**
   * With `timeout(1)`'s ladder: SIGKILL to the group this long after the first signal, in ms (`timeout -k`; at
   * least 10 ms is used). Default: none, the command is then waited for after its first signal.
   */
  killAfterMs?: number;
  /**
   * Restart the time limit whenever the command writes to stdout or stderr. Its stdout and stderr then go
   * through pipes and are copied, byte for byte, to this process's stdout and stderr (whatever `stdio` says
   * for them). When one of ours breaks (its reader went away, as in `… | head`), the command's process group
   * gets SIGPIPE at the write that found it broken, as it would have from a plain pipe, and that copy stops.
   * Default `false`.
   */
  progressOnOutput?: boolean;
  /**
   * Start a reaper: a small `/bin/sh` process, in a session of its own, that holds a pipe from this process
   * and kills the command's process group with SIGKILL when the pipe closes without the guard having said that
   * the command ended, that is, when this process dies by any means, SIGKILL included, while the command runs.
   * It checks first that the group is still the command's (see the README's "When the guard dies"). One extra
   * process per command: about 2 ms more per command and 1.7 MB of RSS while it runs. Ignored on Windows.
   * Default `true`.
   */
  reaper?: boolean;
  /**
   * Where the command runs. `"session"`: in a process group of its own, in a new session without a controlling
   * terminal. `"group"`: in a process group of its own, in this process's session, as `timeout(1)` runs it: it
   * can open the terminal, but a read from it stops the command (it is not the terminal's foreground group).
   * `"foreground"`: in this process's own group, as `timeout --foreground`: it may use the terminal, each signal
   * goes to the command alone (its children are not signalled, nor swept) and no reaper is started. Limits
   * and stops signal the whole group in the first two. `"group"` needs Perl (`/usr/bin/perl`), without which
   * it is `"session"`; so it is when this process has no controlling terminal (the two then behave alike, and
   * a new session starts sooner). Default `"session"`.
   */
  processGroup?: "session" | "group" | "foreground";
  /**
   * Signals the command starts with ignored, as a command inherits them from a shell that ran `trap '' PIPE`
   * (Node's `spawn()` resets every disposition). Needs Perl (`/usr/bin/perl`); without it they are not
   * ignored. With `processGroup: "session"`, the command then runs in a group of its own in this process's
   * session. Default: none.
   */
  ignoredSignals?: readonly NodeJS.Signals[];
  /** Passed to `spawn()`. Default `"inherit"`. */
  stdio?: StdioOptions;
  /** The command's environment. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The command's working directory. Default: ours. */
  cwd?: string;
  /**
   * Stops the command: SIGTERM to its process group, then the ladder (SIGINT, SIGTERM, then SIGTERM or SIGKILL)
   * every grace period; the group is swept after the command exits. Already aborted: rejects with its reason
   * and runs nothing.
   */
  signal?: AbortSignal;
  /** Called once the command has started, with its pid (also its process group id) and the `ChildProcess`. */
  onSpawn?: (pid: number, child: ChildProcess) => void;
  /** Called after each escalation step a limit took. */
  onInterrupt?: (event: GuardedInterruptEvent) => void;
  /** How often the memory limit samples, in ms (the time limit does not depend on it). Default 100 ms. */
  checkIntervalMs?: number;
  /** A pino-shaped logger: each escalation step (warn) and each stop (info). Default: silent. */
  logger?: Logger;
  /**
   * Forward the signals this process receives to the command's process group while it runs, by the rules of
   * `forwardSignals()`: `true` for all of `forwardedSignals`, or a list of them (a program with its own SIGINT
   * and SIGTERM handling lists the other five). The listeners are installed before the spawn, so a signal that
   * arrives as the command starts reaches it instead of ending this process, and removed once the command has
   * ended. Default `false`.
   */
  forwardSignals?: boolean | readonly ForwardedSignal[];
}

/** How a guarded command ended. */
export interface GuardedCommandResult {
  /**
   * The status to report: 124 once the time limit acted, 125 once the memory limit did (the first limit to act
   * wins), 127 when the command was not found, 126 when it cannot be run, 128+n when signal n killed it,
   * otherwise its own exit code.
   */
  exitCode: number;
  /** The limit that acted first, if any. */
  limit: GuardedLimit | undefined;
  /** The command's own exit code (`null` after a signal or when it did not start). */
  code: number | null;
  /** The signal that ended the command, if any. */
  signal: NodeJS.Signals | null;
  /** The command's pid, when it started. */
  pid: number | undefined;
  /** Why it did not start (`spawn`'s error), when it did not. */
  spawnError: NodeJS.ErrnoException | undefined;
}

/** {@link runGuardedCommand}'s handle: a promise of the result, plus `kill()`. */
export type GuardedCommand = Promise<GuardedCommandResult> & {
  /**
   * Sends `signal` to the command's process group as it is (no ladder), e.g. to forward a signal we received;
   * the group is then swept after the command exits. Returns `false` when the command is not running.
   */
  kill(signal: NodeJS.Signals): boolean;
  /**
   * Acts as if the time limit were reached now, as `timeout(1)` takes a SIGALRM: the time limit's ladder
   * starts at once (the result's `limit` is then `"time"`), and the limit's own timer is dropped. Once only;
   * it works without a time limit too, and does nothing before the command has started or after it ended.
   */
  expire(): void;
};

const fn = <F>() => v.custom<F>((value) => typeof value === "function", { error: "a function" });

const signalName = v.enum(Object.keys(constants.signals) as [NodeJS.Signals, ...NodeJS.Signals[]], {
  error: 'a signal name ("SIGTERM", "SIGINT", "SIGKILL", …)',
});

const schema = v.strictObject({
  timeoutMs: nonNegative("a finite number of milliseconds ≥ 0").optional(),
  maxMemoryBytes: nonNegative(bytes).optional(),
  gracePeriodMs: duration.optional(),
  sendKill: bool.optional(),
  killSignal: v
    .union([signalName, v.number().int().min(0).max(64)], {
      error: 'a signal name ("SIGTERM", "SIGINT", "SIGKILL", …) or number (0 to 64)',
    })
    .optional(),
  killAfterMs: duration.optional(),
  processGroup: v
    .enum(["session", "group", "foreground"], { error: '"session", "group" or "foreground"' })
    .optional(),
  ignoredSignals: v.array(signalName).optional(),
  progressOnOutput: bool.optional(),
  reaper: bool.optional(),
  stdio: v
    .custom<StdioOptions>((value) => typeof value === "string" || Array.isArray(value), {
      error: 'spawn()\'s stdio ("inherit", "pipe", "ignore" or an array)',
    })
    .optional(),
  env: v.record(v.string(), v.string().optional(), { error: "an object of strings" }).optional(),
  cwd: v.string({ error: "a directory path (string)" }).optional(),
  signal: v.instanceof(AbortSignal, { error: "an AbortSignal" }).optional(),
  onSpawn: fn<NonNullable<GuardedCommandOptions["onSpawn"]>>().optional(),
  onInterrupt: fn<NonNullable<GuardedCommandOptions["onInterrupt"]>>().optional(),
  checkIntervalMs: interval.optional(),
  logger: loggerOption,
  forwardSignals: forwardSignalsOption.optional(),
});

const argsSchema = v.strictObject({
  command: v
    .string({ error: "a program (non-empty string)" })
    .min(1, { error: "a program (non-empty string)" }),
  args: v.array(v.string(), { error: "an array of strings" }),
});

/**
 * Runs `command args…` in its own process group under a time and/or memory limit (metric `"tree"`: the command
 * and all its descendants), with the guards' signal ladder to the whole group: SIGINT, then SIGTERM after the
 * grace period, then SIGTERM again (SIGKILL with `sendKill`). A group that received a signal is swept with
 * SIGKILL once the command exits, so its background jobs do not outlive it. A reaper process (option `reaper`)
 * kills the group if this process dies, even of SIGKILL, while the command runs. The handle's promise never
 * rejects for the command (a command that cannot start resolves with 126 or 127). Option `forwardSignals`
 * forwards the signals this process receives to the command's group while it runs.
 *
 * @param command - the program, found through `PATH`
 * @param args - its arguments, passed untouched
 * @param options - see {@link GuardedCommandOptions}: `timeoutMs` (default: none), `maxMemoryBytes` (default:
 *   none), `gracePeriodMs` (default 15 000 ms, 5 000 ms between the memory limit's later levels),
 *   `checkIntervalMs` (default 100 ms), …
 * @returns a {@link GuardedCommand}: the result's promise, with `kill(signal)`
 * @throws GuardError `ERR_X_GUARD_INVALID_OPTION` (synchronously) for a bad argument or option; rejects with
 *   `signal.reason` when `signal` is already aborted
 *
 * @example
 * ```ts
 * const { exitCode, limit } = await runGuardedCommand("make", ["-j4"], {
 *   timeoutMs: 3_600_000,
 *   maxMemoryBytes: 4 * 1024 ** 3,
 * });
 * ```
 */
export function runGuardedCommand(
  command: string,
  args: readonly string[],
  options: GuardedCommandOptions = {},
): GuardedCommand {
  parse(argsSchema, { command, args });
  const o = parse(schema, options);
  if (o.killSignal !== undefined || o.killAfterMs !== undefined) {
    for (const name of ["gracePeriodMs", "sendKill"] as const) {
      if (o[name] === undefined) continue;
      const expected = "absent with killSignal or killAfterMs (timeout(1)'s ladder)";
      throw optionError(ErrorCode.INVALID_OPTION, name, o[name], expected, GuardError);
    }
  }
  if (o.maxMemoryBytes !== undefined && !procfsShowsOurPids()) {
    throw new GuardError(
      ErrorCode.UNSUPPORTED,
      "the memory limit cannot measure the command: /proc shows another PID namespace than ours (mount its own, e.g. unshare --mount-proc)",
    );
  }
  const state: RunState = { signalled: false, alone: o.processGroup === "foreground" };
  const kill = (signal: NodeJS.Signals): boolean => {
    const { child } = state;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return false;
    state.signalled = true;
    return killGroup(child.pid, signal, state.alone);
  };
  const expire = () => state.expire?.();
  if (o.signal?.aborted) return Object.assign(Promise.reject(o.signal.reason), { kill, expire });
  const signals = o.forwardSignals === true ? forwardedSignals : o.forwardSignals || [];
  // before the spawn: a signal that arrives as the command starts is the command's, not fatal to us
  const stopForwarding = listenAndForward(signals, (signal) => kill(signal));
  return Object.assign(run(command, args, o, state).finally(stopForwarding), { kill, expire });
}

type Parsed = v.Output<typeof schema>;

/** What the handle's `kill()` shares with the run. */
interface RunState {
  child?: ChildProcess;
  /** Someone sent the group a signal (`kill()` or a stop): sweep it once the command exits. */
  signalled: boolean;
  /** `processGroup: "foreground"`: signals go to the command alone, and nothing is swept. */
  alone: boolean;
  /** The handle's `expire()`, once the command runs. */
  expire?: () => void;
}

async function run(
  command: string,
  args: readonly string[],
  o: Parsed,
  state: RunState,
): Promise<GuardedCommandResult> {
  const log = o.logger;
  const { timeoutMs, maxMemoryBytes } = o;
  const ladder = commandLadder(o);
  const piped = o.progressOnOutput ?? false;
  const alone = state.alone;
  // started first, so that only one write to a pipe separates the command's spawn from its guard
  const reaper = (o.reaper ?? true) && process.platform !== "win32" && !alone ? startReaper(log) : undefined;
  const stdio = piped ? stdinOnly(o.stdio ?? "inherit") : (o.stdio ?? "inherit");
  const env = o.env ?? process.env;
  const ignored = o.ignoredSignals ?? [];
  // without a terminal, a new session is as good as a group in ours, and needs no launcher (start-up time)
  const inOurSession = o.processGroup === "group" && hasControllingTerminal();
  let child: ChildProcess;
  let started: Promise<NodeJS.ErrnoException | undefined>;
  let session: number | undefined; // the command's session, when it is ours
  try {
    if ((inOurSession || ignored.length > 0) && launcherAvailable()) {
      session = ownSession();
      // a process group of its own in our session, or dispositions: only the launcher can set them (it leaves
      // the command in a group of its own in our session whenever it is not to stay in ours)
      const launched = launch(command, args, { ownGroup: !alone, ignored, stdio, env, cwd: o.cwd });
      ({ child, started } = launched);
    } else {
      child = spawn(command, args, {
        detached: !alone, // a process group of its own, in a new session
        stdio,
        env,
        ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
      });
      const spawned = child;
      started = new Promise((resolve) => {
        spawned.once("spawn", () => resolve(undefined));
        spawned.once("error", (error) => resolve(error));
      });
    }
  } catch (error) {
    reaper?.disarm();
    throw error;
  }
  state.child = child;
  // at once, before the event loop can reap the command: its pid and start time still name it
  if (child.pid !== undefined) reaper?.arm(child.pid, session ?? child.pid);
  const spawnError = await started;
  if (spawnError !== undefined) {
    reaper?.disarm();
    const exitCode = isCode(spawnError, "ENOENT") ? GuardedExitCode.NOT_FOUND : GuardedExitCode.CANNOT_RUN;
    return { exitCode, limit: undefined, code: null, signal: null, pid: undefined, spawnError };
  }
  const pid = child.pid!;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once("exit", (code, signal) => resolve({ code, signal }));
  });

  let limit: GuardedLimit | undefined;
  const onInterrupt = (which: GuardedLimit) => (event: InterruptEvent) => {
    limit ??= which;
    log.warn({ limit: which, escalation: event.level, pid }, `${which} limit: ${event.action}`);
    o.onInterrupt?.({ ...event, limit: which });
  };
  const handles: WatchHandle[] = [];
  let cancelWait: (() => void) | undefined;
  let timeHandle: TimeWatchHandle | undefined;
  const targetGroup = alone ? "process" : "group";
  if (timeoutMs !== undefined) {
    // a limit longer than a timer can wait: the guard starts once only that much is left
    const wait = Math.max(0, timeoutMs - MAX_DURATION_MS);
    const time = withSignals(
      timeGuard({ ...ladder.time, timeoutMs: timeoutMs - wait }),
      ladder.signals,
      targetGroup,
    );
    time.on("interrupt", onInterrupt("time"));
    const watch = () => {
      timeHandle = time.watch(child);
      handles.push(timeHandle);
    };
    if (wait === 0) watch();
    else cancelWait = waitLong(wait, watch);
  }
  let expired = false;
  state.expire = () => {
    if (expired || child.exitCode !== null || child.signalCode !== null) return;
    expired = true;
    cancelWait?.();
    void timeHandle?.close();
    const now = withSignals(timeGuard({ ...ladder.time, timeoutMs: 0 }), ladder.signals, targetGroup);
    now.on("interrupt", onInterrupt("time"));
    handles.push(now.watch(child));
  };
  if (maxMemoryBytes !== undefined) {
    const memory = withSignals(
      memGuard({ ...ladder.memory, maxMemoryBytes, metric: "tree" }),
      ladder.signals,
      targetGroup,
    );
    memory.on("interrupt", onInterrupt("memory"));
    handles.push(memory.watch(child));
  }

  const stop = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    log.info({ pid }, `stopping the command: ${ladder.stopSignal} to its process group`);
    state.signalled = true;
    if (!killGroup(pid, ladder.stopSignal, alone)) return;
    const after = ladder.afterStop;
    if (after !== undefined) {
      handles.push(withSignals(timeGuard(after.options), after.signals, targetGroup).watch(child));
    }
  };
  o.signal?.addEventListener("abort", stop, { once: true });
  if (o.signal?.aborted) stop(); // aborted while the command was starting

  const copies: Promise<void>[] = [];
  if (piped) {
    const onChunk = () => timeHandle?.progress();
    // the command wrote into an output whose reader is gone: SIGPIPE, as a plain pipe would have sent it
    const onBroken = () => killGroup(pid, "SIGPIPE", alone);
    copies.push(
      copyOutput(child.stdout!, process.stdout, onChunk, onBroken),
      copyOutput(child.stderr!, process.stderr, onChunk, onBroken),
    );
  }
  try {
    try {
      o.onSpawn?.(pid, child);
    } catch (error) {
      log.error({ err: error, pid }, "onSpawn threw; the command runs on");
    }
    const exit = await exited;
    state.expire = undefined;
    cancelWait?.();
    await Promise.allSettled(handles);
    // the sweep: background jobs must not outlive the command (not in the foreground: the pid may be reused)
    if (state.signalled && !alone) killGroup(pid, "SIGKILL");
    reaper?.disarm(); // the command ended under our eyes: what is left of its group is not the reaper's
    if (copies.length > 0) await drainOutput(copies, [child.stdout!, child.stderr!]);
    let exitCode: number;
    // with timeout(1)'s ladder, as timeout(1): a command that SIGKILL ended says so
    const killed = ladder.signals !== undefined && exit.signal === "SIGKILL";
    if (limit === "time") exitCode = killed ? signalExitCode("SIGKILL") : GuardedExitCode.TIMEOUT;
    else if (limit === "memory") exitCode = GuardedExitCode.MEMORY;
    else if (exit.code !== null) exitCode = exit.code;
    else exitCode = signalExitCode(exit.signal!);
    return { exitCode, limit, code: exit.code, signal: exit.signal, pid, spawnError: undefined };
  } finally {
    reaper?.disarm();
    o.signal?.removeEventListener("abort", stop);
    await Promise.allSettled(handles.map((handle) => handle.close()));
  }
}

type TimeOptions = Parameters<typeof timeGuard>[0] & object;
type MemOptions = Omit<Parameters<typeof memGuard>[0], "maxMemoryBytes">;

/** How a command's limits, and a stop, escalate: the three steps, or `timeout(1)`'s. */
interface CommandLadder {
  /** Options of the time limit's guard, without `timeoutMs`. */
  time: TimeOptions;
  /** Options of the memory limit's guard, without its limit. */
  memory: MemOptions;
  /** The signal of each level of a limit, for `timeout(1)`'s ladder; `undefined`: the three steps. */
  signals: readonly (NodeJS.Signals | number)[] | undefined;
  /** What a stop by `signal` sends first. */
  stopSignal: NodeJS.Signals | number;
  /** The guard that escalates after a stop (its `timeoutMs` after the first signal) and its signals, if any. */
  afterStop: { options: TimeOptions; signals: readonly (NodeJS.Signals | number)[] | undefined } | undefined;
}

/**
 * The three steps (SIGINT, SIGTERM after the grace period, then SIGTERM or SIGKILL) when neither `killSignal`
 * nor `killAfterMs` is given; otherwise `timeout(1)`'s: `killSignal`, then SIGKILL `killAfterMs` later if given.
 */
function commandLadder(o: Parsed): CommandLadder {
  const common = {
    interruptType: InterruptType.signal,
    checkIntervalMs: o.checkIntervalMs ?? 100,
    logger: o.logger,
  };
  if (o.killSignal === undefined && o.killAfterMs === undefined) {
    const { gracePeriodMs } = o;
    const steps = { ...common, sendKill: o.sendKill ?? false };
    return {
      time: { ...steps, gracePeriodMs },
      memory: { ...steps, secondaryGracePeriodMs: gracePeriodMs },
      signals: undefined,
      stopSignal: "SIGTERM",
      afterStop: {
        options: { ...steps, timeoutMs: gracePeriodMs ?? 15_000, gracePeriodMs },
        signals: undefined,
      },
    };
  }
  const first = o.killSignal ?? "SIGTERM";
  const { killAfterMs } = o;
  return {
    time: { ...common, gracePeriodMs: killAfterMs },
    memory: { ...common, secondaryGracePeriodMs: killAfterMs },
    signals: killAfterMs === undefined ? [first] : [first, "SIGKILL"],
    stopSignal: first,
    afterStop:
      killAfterMs === undefined
        ? undefined
        : { options: { ...common, timeoutMs: killAfterMs }, signals: ["SIGKILL"] },
  };
}

/**
 * Gives `guard` the signals of a `timeout(1)` ladder (`undefined` leaves its `interruptType`'s), and what the
 * command is to the signals: the leader of a group of its own, or a process alone.
 */
function withSignals<G extends TimeGuard | MemGuard>(
  guard: G,
  signals: readonly (NodeJS.Signals | number)[] | undefined,
  targetGroup: "group" | "process",
): G {
  if (signals !== undefined) guard.config.ladder = signals;
  guard.config.targetGroup = targetGroup;
  return guard;
}

/** `stdio` with stdout and stderr piped (for `progressOnOutput`); stdin stays as given. */
function stdinOnly(stdio: StdioOptions): StdioOptions {
  const stdin = typeof stdio === "string" ? stdio : (stdio[0] ?? "pipe");
  return [stdin, "pipe", "pipe"];
}

/** Sends `signal` to process group `pid` (to the process alone with `alone`); `false` when it is gone. */
function killGroup(pid: number, signal: NodeJS.Signals | number, alone = false): boolean {
  try {
    process.kill(alone ? pid : -pid, signal);
    return true;
  } catch {
    return false;
  }
}
