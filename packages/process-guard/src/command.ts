/**
 * x-guard: run a command under a time and/or memory limit, like `timeout(1)` with a memory guard and an
 * escalation ladder. See `x-guard --help` and the README.
 */
import {
  cliProgram,
  ExitCode,
  infoFlagsHelp,
  parseDurationMs,
  parseSizeBytes,
  signalExitCode,
  UsageError,
} from "@x/core/internal";
import type { BrokenPipeHandling } from "./broken-pipe.js";
import { GuardedExitCode } from "./exit-codes.js";

const { constants } = process.getBuiltinModule("node:os");

const cli = cliProgram("x-guard", import.meta.url);

const usage = `Usage: x-guard [options] DURATION <command> [args…]     (as timeout(1))
   or: x-guard [options] [--timeout DURATION] [--max-memory SIZE] [--] <command> [args…]

Runs <command> in its own process group under a time and/or memory limit. When a limit is reached,
the whole group gets the first signal (-s, TERM by default), then KILL -k later if -k is given, as
timeout(1) does; each step is reported on stderr. --grace or --send-kill choose x-guard's three steps
instead: SIGINT, then SIGTERM a grace period later, then SIGTERM again (or SIGKILL with --send-kill).

Options:
  DURATION              without --timeout, a first argument that starts with a digit is the time
                        limit, as timeout(1) reads it (0: no time limit)
  --timeout DURATION    time limit: seconds (fractions allowed), or with an s, m, h or d suffix as in
                        timeout(1): 90, 1.5m, 6h (0: at once)
  -s, --signal SIG      the first signal a limit sends: a name (TERM, SIGINT, hup) or a number
                        (default TERM)
  -k, --kill-after DURATION
                        also send KILL this long after the first signal (0: never)
  --preserve-status     exit with the command's status even when a limit stopped it
  --grace DURATION      x-guard's three steps, this far apart, written as --timeout (default 15 for
                        time, 5 for memory)
  --send-kill           x-guard's three steps, the last one SIGKILL
  --max-memory SIZE     limit on the resident memory of the command and all its descendants: bytes,
                        or with a K, M or G suffix (×1024): 512M, 1.5G, 100KiB
  --progress-on-output  restart the time limit whenever the command writes to stdout or stderr
${infoFlagsHelp(24)}

A time limit or --max-memory is required.

Exit status:
  124  the time limit was reached (whatever happened next)
  125  the memory limit was exceeded, or x-guard itself failed
  126  the command cannot be run
  127  the command was not found
  137  the command was killed by SIGKILL (after the time limit too, as timeout(1), unless
       --grace or --send-kill chose x-guard's three steps: 124)
  64   usage error
  128+n  the command died of signal n (not sent by x-guard as a guard)
  otherwise the command's own exit status

Signals:
  SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM to x-guard are forwarded to the command's
  process group, every time. A first SIGINT or SIGTERM is forwarded too; more within 1 s are the
  same request (timeout(1) signals x-guard, then its group); one 1 s or more later sends SIGKILL. The limits still apply
  afterwards, and the exit status says how the command ended (128+n if it died of signal n).
  If x-guard itself dies (even of SIGKILL), a reaper process kills the command's group.
`;

/** Exit statuses of x-guard. */
export const GuardExit = {
  ...GuardedExitCode,
  USAGE: ExitCode.USAGE,
  /** x-guard itself failed: 125, as `timeout(1)` (which shares it with the memory limit here). */
  FAILURE: 125,
} as const;

/** The parsed command line. */
export interface GuardCommandLine {
  /** `--timeout`, or the leading DURATION of `timeout(1)`'s form (whose 0 leaves it out), in ms. */
  timeoutMs?: number;
  /** `-s`/`--signal`: the first signal of `timeout(1)`'s ladder. */
  signal?: NodeJS.Signals;
  /** `-k`/`--kill-after`, in ms (`0` leaves it out, as in `timeout(1)`). */
  killAfterMs?: number;
  /** `--preserve-status`. */
  preserveStatus: boolean;
  /** `timeout(1)`'s DURATION was 0: no time limit, on purpose. */
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

/** A signal as `timeout -s` takes it: a name, with or without `SIG`, in any case, or a number. */
function parseSignal(option: string, text: string): NodeJS.Signals {
  const upper = text.toUpperCase();
  const names = Object.keys(constants.signals) as NodeJS.Signals[];
  const signal = /^\d+$/.test(text)
    ? names.find((name) => constants.signals[name] === Number(text))
    : names.find((name) => name === upper || name === `SIG${upper}`);
  if (signal === undefined) throw new UsageError(`${option}: ${JSON.stringify(text)} is not a signal`);
  return signal;
}

/**
 * Parses x-guard's arguments: options first; `--` or the first non-option starts the command, and everything
 * after it is the command's (`util.parseArgs` would go on reading options after a positional). Without
 * `--timeout`, a first non-option that starts with a digit is `timeout(1)`'s DURATION. Durations and sizes are
 * read by `parseDurationMs` and `parseSizeBytes` of `@x/core/internal`.
 *
 * @throws UsageError (`ERR_X_USAGE`) for a command line that does not fit
 */
export function parseGuardArgs(args: string[]): GuardCommandLine {
  const line: GuardCommandLine = {
    sendKill: false,
    preserveStatus: false,
    untimed: false,
    progressOnOutput: false,
    help: false,
    version: false,
    command: [],
  };
  let i = 0;
  const value = (name: string, inline: string | undefined): string => {
    if (inline !== undefined) return inline;
    const next = args[++i];
    if (next === undefined) throw new UsageError(`option ${name} needs a value`);
    return next;
  };
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      line.command = args.slice(i + 1);
      return line;
    }
    if (!arg.startsWith("-") || arg === "-") {
      if (line.timeoutMs === undefined && /^\.?\d/.test(arg)) {
        // timeout(1)'s form: DURATION COMMAND…, where 0 means no time limit
        const ms = parseDurationMs("DURATION", arg);
        if (ms > 0) line.timeoutMs = ms;
        else line.untimed = true;
        line.command = args.slice(i + 1);
      } else line.command = args.slice(i);
      return line;
    }
    // -s SIG and -k DUR may also be written -sSIG and -kDUR, as timeout(1) takes them
    const short = /^-[sk]./.test(arg);
    const eq = short ? -1 : arg.indexOf("=");
    const name = short ? arg.slice(0, 2) : eq === -1 ? arg : arg.slice(0, eq);
    const inline = short ? arg.slice(2) : eq === -1 ? undefined : arg.slice(eq + 1);
    const flag = (): true => {
      if (inline !== undefined) throw new UsageError(`option ${name} takes no value`);
      return true;
    };
    switch (name) {
      case "--timeout":
        line.timeoutMs = parseDurationMs(name, value(name, inline));
        break;
      case "--grace":
        line.gracePeriodMs = parseDurationMs(name, value(name, inline));
        break;
      case "--max-memory":
        line.maxMemoryBytes = parseSizeBytes(name, value(name, inline));
        break;
      case "--send-kill":
        line.sendKill = flag();
        break;
      case "-s":
      case "--signal":
        line.signal = parseSignal(name, value(name, inline));
        break;
      case "-k":
      case "--kill-after": {
        const ms = parseDurationMs(name, value(name, inline));
        line.killAfterMs = ms > 0 ? ms : undefined;
        break;
      }
      case "--preserve-status":
        line.preserveStatus = flag();
        break;
      case "--progress-on-output":
        line.progressOnOutput = flag();
        break;
      case "-h":
      case "--help":
        line.help = flag();
        return line;
      case "--version":
        line.version = flag();
        return line;
      default:
        throw new UsageError(`unknown option ${name}`);
    }
  }
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
  let line: GuardCommandLine;
  try {
    line = parseGuardArgs(args);
    if (!line.help && !line.version) {
      if (line.command.length === 0) throw new UsageError("no command given");
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
    return cli.usageError(error);
  }
  const answered = cli.answer(line, usage);
  if (answered !== undefined) return answered;

  onCommand?.();
  // Loaded only now: --help, --version and usage errors answer without it.
  const { runGuardedCommand } = await import("./guarded-command.js");
  const [file, ...rest] = line.command as [string, ...string[]];
  const pipesBack = pipes?.whileCommandRuns();
  const threeSteps = line.gracePeriodMs !== undefined || line.sendKill;
  const command = runGuardedCommand(file, rest, {
    timeoutMs: line.timeoutMs,
    maxMemoryBytes: line.maxMemoryBytes,
    // timeout(1)'s ladder unless x-guard's three steps are asked for
    ...(threeSteps
      ? { gracePeriodMs: line.gracePeriodMs, sendKill: line.sendKill }
      : { killSignal: line.signal ?? "SIGTERM", killAfterMs: line.killAfterMs }),
    progressOnOutput: line.progressOnOutput,
    // HUP, QUIT, USR1, USR2 and ALRM go to the command's group as they are; the first INT or TERM too, and a
    // second one forces with SIGKILL (the toolkit's convention); the group is swept once the command exits
    forwardSignals: true,
    onInterrupt: ({ limit, level, action, error }) => {
      const what = limit === "time" ? "time limit reached" : "memory limit exceeded";
      report(`${what} (level ${level}): ${action} [${error.message}]`);
    },
  });
  const { exitCode, spawnError, code, signal } = await command.finally(() => pipesBack?.());
  if (spawnError !== undefined) {
    const why = exitCode === GuardExit.NOT_FOUND ? "command not found" : `cannot run: ${spawnError.message}`;
    report(`${file}: ${why}`);
    return exitCode;
  }
  if (line.preserveStatus) return code ?? signalExitCode(signal!);
  return exitCode;
}
