/**
 * x-guard: run a command under a time and/or memory limit, like `timeout(1)` with a memory guard and an
 * escalation ladder. See `x-guard --help` and the README.
 */
import { type CliProgram, cliProgram, parseSizeBytes, signalExitCode, UsageError } from "@x/core/internal";
import type { BrokenPipeHandling } from "./broken-pipe.js";
import { errnoText } from "./errno-text.js";
import { GuardedExitCode } from "./exit-codes.js";
import { getopt, type OptionSpec } from "./getopt.js";
import { parseTimeoutDuration, parseTimeoutSignal, signalName } from "./timeout-syntax.js";
import { usageText } from "./usage.js";

const { constants } = process.getBuiltinModule("node:os");

let program: CliProgram | undefined;

/**
 * x-guard's answers to `--help` and `--version` and its usage errors, made on first use: a command that runs
 * something needs none of them.
 */
function cli(): CliProgram {
  program ??= cliProgram("x-guard", import.meta.url);
  return program;
}

/** Exit statuses of x-guard: timeout(1)'s, and one of its own for the memory limit. */
export const GuardExit = {
  ...GuardedExitCode,
  /** The memory limit was exceeded (125, `runGuardedCommand()`'s, is timeout(1)'s own failure). */
  MEMORY: 122,
  /** x-guard itself failed, or its command line is wrong: 125, as `timeout(1)`. */
  FAILURE: 125,
  USAGE: 125,
} as const;

/** The parsed command line. */
export interface GuardCommandLine {
  /** `--timeout`, or the DURATION of `timeout(1)`'s form (whose 0 leaves it out), in ms. */
  timeoutMs?: number;
  /** `-s`/`--signal`: the first signal of `timeout(1)`'s ladder, by number (0: `EXIT`). */
  signal?: number;
  /** `-k`/`--kill-after`, in ms (`0` leaves it out, as in `timeout(1)`). */
  killAfterMs?: number;
  /** `--preserve-status`. */
  preserveStatus: boolean;
  /** `--foreground`. */
  foreground: boolean;
  /** `-v`/`--verbose`. */
  verbose: boolean;
  /** `timeout(1)`'s DURATION was 0 (or infinite): no time limit, on purpose. */
  untimed: boolean;
  /** `--grace`, in ms. */
  gracePeriodMs?: number;
  /** `--max-memory`, in bytes. */
  maxMemoryBytes?: number;
  sendKill: boolean;
  progressOnOutput: boolean;
  help: boolean;
  /** `--version`. */
  version: boolean;
  command: string[];
}

const specs: OptionSpec[] = [
  { long: "timeout", takesValue: true },
  { long: "max-memory", takesValue: true },
  { long: "grace", takesValue: true },
  { long: "send-kill", takesValue: false },
  { long: "signal", short: "s", takesValue: true },
  { long: "kill-after", short: "k", takesValue: true },
  { long: "preserve-status", takesValue: false },
  { long: "foreground", takesValue: false },
  { long: "verbose", short: "v", takesValue: false },
  { long: "progress-on-output", takesValue: false },
  { long: "help", short: "h", takesValue: false },
  { long: "version", takesValue: false },
];

/** A duration of x-guard's own options (`--timeout`, `--grace`), as `timeout(1)` writes them, finite. */
function finiteDuration(option: string, text: string): number {
  const ms = parseTimeoutDuration(text);
  if (!Number.isFinite(ms)) throw new UsageError(`${option}: '${text}' is not a finite duration`);
  return ms;
}

/**
 * Parses x-guard's arguments as `timeout(1)` does (getopt: options first, unambiguous long prefixes, `--`), then
 * the operands: without `--timeout` or `--max-memory`, the first is `timeout(1)`'s DURATION; with
 * `--max-memory` alone, a first operand that starts with a digit is. The rest is the command.
 *
 * @throws UsageError (`ERR_X_USAGE`) for a command line that does not fit, with getopt's and timeout's messages
 */
export function parseGuardArgs(args: string[]): GuardCommandLine {
  const line: GuardCommandLine = {
    sendKill: false,
    preserveStatus: false,
    foreground: false,
    verbose: false,
    untimed: false,
    progressOnOutput: false,
    help: false,
    version: false,
    command: [],
  };
  const { options, operands } = getopt(args, specs);
  for (const { long, value = "" } of options) {
    switch (long) {
      case "timeout": {
        const ms = parseTimeoutDuration(value);
        if (Number.isFinite(ms)) line.timeoutMs = ms;
        else line.untimed = true;
        break;
      }
      case "grace":
        line.gracePeriodMs = finiteDuration("--grace", value);
        break;
      case "max-memory":
        line.maxMemoryBytes = parseSizeBytes("--max-memory", value);
        break;
      case "signal":
        line.signal = parseTimeoutSignal(value);
        break;
      case "kill-after": {
        const ms = parseTimeoutDuration(value);
        line.killAfterMs = ms > 0 && Number.isFinite(ms) ? ms : undefined;
        break;
      }
      case "help":
        line.help = true;
        return line;
      case "version":
        line.version = true;
        return line;
      default: {
        const flag = long.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()) as
          | "sendKill"
          | "preserveStatus"
          | "foreground"
          | "verbose"
          | "progressOnOutput";
        line[flag] = true;
      }
    }
  }
  const hasTimeout = line.timeoutMs !== undefined || line.untimed;
  const durationFirst =
    !hasTimeout && (line.maxMemoryBytes === undefined || /^\s*[+.\d]/.test(operands[0] ?? ""));
  if (durationFirst) {
    // as timeout(1) 9: no message, only the hint
    if (operands.length < 2) throw new UsageError("");
    const ms = parseTimeoutDuration(operands[0]!);
    // timeout(1)'s form: 0 (or a number too small to be told from it) and inf mean no time limit
    if (ms > 0 && Number.isFinite(ms)) line.timeoutMs = ms;
    else line.untimed = true;
    line.command = operands.slice(1);
  } else line.command = operands;
  return line;
}

/**
 * Writes one line of x-guard's own on stderr. `process.stderr` is only read here: creating it loads Node's
 * stream modules, which a command that reports nothing never needs before `child_process` loads them.
 */
function report(text: string): void {
  process.stderr.write(`x-guard: ${text}\n`);
}

/**
 * Signals whose caller's disposition a command under `timeout(1)` does not inherit: timeout catches them
 * (an exec resets a caught signal to its default) or resets them in the child, and SIGKILL and SIGSTOP cannot
 * be ignored.
 */
const caughtByTimeout = new Set<string>([
  "SIGALRM",
  "SIGINT",
  "SIGQUIT",
  "SIGHUP",
  "SIGTERM",
  "SIGCHLD",
  "SIGTTIN",
  "SIGTTOU",
  "SIGKILL",
  "SIGSTOP",
]);

/**
 * The variable in which x-guard's bin passes on the signals its caller ignored (`/proc/self/stat`'s field 33,
 * the mask of ignored signals, in decimal).
 */
export const ignoredSignalsVariable = "X_GUARD_SIGIGN";

/**
 * The signals x-guard's caller left ignored, which the command inherits as under `timeout(1)`: Node resets
 * them when it starts, so the bin's shell reads its own `/proc/self/stat` first and passes the mask on in
 * {@link ignoredSignalsVariable}, removed here from the environment the command gets. Those that timeout(1)
 * catches itself, and the first signal of the ladder, are left out as it leaves them out; so are real-time
 * signals.
 */
function takeIgnoredSignals(): NodeJS.Signals[] {
  const mask = process.env[ignoredSignalsVariable];
  delete process.env[ignoredSignalsVariable];
  if (mask === undefined || !/^\d{1,20}$/.test(mask)) return [];
  const bits = BigInt(mask);
  if (bits === 0n) return []; // nothing ignored, the usual case
  return (Object.entries(constants.signals) as [NodeJS.Signals, number][])
    .filter(([name, number]) => !caughtByTimeout.has(name) && (bits >> BigInt(number - 1)) & 1n)
    .map(([name]) => name);
}

/**
 * Runs x-guard with `args` and resolves with the exit status (it does not exit the process).
 *
 * @param args - the arguments after `x-guard`
 * @param pipes - what to do while the command runs about our stdout and stderr breaking (the bin passes
 *   `handleBrokenPipes()`); default: nothing
 * @param onCommand - called when the command line is valid and a command is about to run
 */
export async function runGuardCommand(
  args: string[],
  pipes?: BrokenPipeHandling,
  onCommand?: () => void,
): Promise<number> {
  const ignoredSignals = takeIgnoredSignals();
  let line: GuardCommandLine;
  try {
    line = parseGuardArgs(args);
    if (!line.help && !line.version) {
      if (line.command.length === 0) throw new UsageError("");
      if (!line.untimed && line.timeoutMs === undefined && line.maxMemoryBytes === undefined) {
        throw new UsageError("give a time limit (DURATION or --timeout) or --max-memory");
      }
      const threeSteps = line.gracePeriodMs !== undefined || line.sendKill;
      if (threeSteps && (line.signal !== undefined || line.killAfterMs !== undefined)) {
        throw new UsageError("-s and -k (timeout(1)'s ladder) do not go with --grace and --send-kill");
      }
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message === "") process.stderr.write("Try 'x-guard --help' for more information.\n");
    else cli().usageError(error);
    return GuardExit.USAGE;
  }
  // a failed write (`--help > /dev/full`) ends x-guard with "write error" and 125 (see broken-pipe.ts)
  const answered = line.help || line.version ? cli().answer(line, usageText()) : undefined;
  if (answered !== undefined) return answered;

  onCommand?.();
  // Loaded only now: --help, --version and usage errors answer without it.
  const { forwardedSignals, runGuardedCommand } = await import("./guarded-command.js");
  const [file, ...rest] = line.command as [string, ...string[]];
  const pipesBack = pipes?.whileCommandRuns();
  const threeSteps = line.gracePeriodMs !== undefined || line.sendKill;
  const first = line.signal ?? constants.signals.SIGTERM;
  // what each level sends, named as `timeout -v` names it: looked up at a limit only
  const sentAt = (level: number) =>
    (threeSteps ? ["INT", "TERM", line.sendKill ? "KILL" : "TERM"] : [signalName(first), "KILL"])[level];
  let killedGroup = false;
  // as timeout(1), whose timer is alarm(2): a SIGALRM is the time limit, reached now (listening before the spawn)
  let expire = () => {};
  const onAlarm = () => expire();
  process.on("SIGALRM", onAlarm);
  const command = runGuardedCommand(file, rest, {
    timeoutMs: line.timeoutMs,
    maxMemoryBytes: line.maxMemoryBytes,
    // timeout(1)'s ladder unless x-guard's three steps are asked for
    ...(threeSteps
      ? { gracePeriodMs: line.gracePeriodMs, sendKill: line.sendKill }
      : { killSignal: first, killAfterMs: line.killAfterMs }),
    progressOnOutput: line.progressOnOutput,
    // as timeout(1): a process group of its own in our session (it cannot read the terminal), or ours
    processGroup: line.foreground ? "foreground" : "group",
    // timeout(1) catches its first signal, so the command starts with it at its default
    ignoredSignals: ignoredSignals.filter((name) => constants.signals[name] !== first),
    // HUP, QUIT, USR1 and USR2 go to the command's group as they are; the first INT or TERM too, and a second
    // one forces with SIGKILL (the toolkit's convention); the group is swept once the command exits
    forwardSignals: forwardedSignals.filter((name) => name !== "SIGALRM"),
    onInterrupt: ({ limit, level, error }) => {
      // timeout(1)'s ladder only: x-guard's three steps report 124 whatever ended the command
      if (!threeSteps && sentAt(level) === "KILL") killedGroup = !line.foreground;
      if (!line.verbose) return;
      if (limit === "memory" && level === 0) report(`memory limit exceeded: ${error.message}`);
      report(`sending signal ${sentAt(level)} to command '${file}'`);
    },
  });
  expire = () => command.expire();
  const { exitCode, spawnError, code, signal, limit } = await command.finally(() => {
    process.off("SIGALRM", onAlarm);
    pipesBack?.();
  });
  if (spawnError !== undefined) {
    report(`failed to run command '${file}': ${errnoText(spawnError)}`);
    return exitCode;
  }
  // timeout(1) is a member of the group it sends KILL to, and its caller sees it killed: so is x-guard
  if (killedGroup) process.kill(process.pid, "SIGKILL");
  if (line.preserveStatus) return code ?? signalExitCode(signal!);
  return limit === "memory" ? GuardExit.MEMORY : exitCode;
}
