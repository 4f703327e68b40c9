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
  UsageError,
} from "@x/core/internal";
import type { BrokenPipeHandling } from "./broken-pipe.js";
import { GuardedExitCode, runGuardedCommand } from "./guarded-command.js";

const cli = cliProgram("x-guard", import.meta.url);

const usage = `Usage: x-guard [options] [--] <command> [args…]

Runs <command> in its own process group under a time and/or memory limit. When a limit is
reached, the whole group gets SIGINT, then SIGTERM after the grace period, then SIGTERM again
(or SIGKILL with --send-kill); each step is reported on stderr.

Options:
  --timeout DURATION    time limit: seconds (fractions allowed), or with an s, m, h or d suffix as in
                        timeout(1): 90, 1.5m, 6h
  --grace DURATION      time between escalation levels, written as --timeout (default 15 for time,
                        5 for memory)
  --max-memory SIZE     limit on the resident memory of the command and all its descendants: bytes,
                        or with a K, M or G suffix (×1024): 512M, 1.5G, 100KiB
  --send-kill           the last level sends SIGKILL instead of SIGTERM
  --progress-on-output  restart the time limit whenever the command writes to stdout or stderr
${infoFlagsHelp(24)}

At least one of --timeout and --max-memory is required.

Exit status:
  124  the time limit was reached (whatever happened next)
  125  the memory limit was exceeded
  126  the command cannot be run
  127  the command was not found
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
  FAILURE: ExitCode.FAILURE,
} as const;

/** The parsed command line. */
export interface GuardCommandLine {
  /** `--timeout`, in ms. */
  timeoutMs?: number;
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

/**
 * Parses x-guard's arguments: options first; `--` or the first non-option starts the command, and everything
 * after it is the command's (`util.parseArgs` would go on reading options after a positional). Durations and
 * sizes are read by `parseDurationMs` and `parseSizeBytes` of `@x/core/internal`.
 *
 * @throws UsageError (`ERR_X_USAGE`) for a command line that does not fit
 */
export function parseGuardArgs(args: string[]): GuardCommandLine {
  const line: GuardCommandLine = {
    sendKill: false,
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
      line.command = args.slice(i);
      return line;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
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
 * Runs x-guard with `args` and resolves with the exit status (it does not exit the process).
 *
 * @param args - the arguments after `x-guard`
 * @param pipes - what to do while the command runs about our stdout and stderr breaking (the bin passes
 *   `handleBrokenPipes()`); default: nothing
 */
export async function runGuardCommand(args: string[], pipes?: BrokenPipeHandling): Promise<number> {
  const stderr = process.stderr;
  let line: GuardCommandLine;
  try {
    line = parseGuardArgs(args);
    if (!line.help && !line.version) {
      if (line.timeoutMs === undefined && line.maxMemoryBytes === undefined) {
        throw new UsageError("give --timeout or --max-memory (or both)");
      }
      if (line.command.length === 0) throw new UsageError("no command given");
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return cli.usageError(error);
  }
  const answered = cli.answer(line, usage);
  if (answered !== undefined) return answered;

  const [file, ...rest] = line.command as [string, ...string[]];
  const pipesBack = pipes?.whileCommandRuns();
  const command = runGuardedCommand(file, rest, {
    timeoutMs: line.timeoutMs,
    maxMemoryBytes: line.maxMemoryBytes,
    gracePeriodMs: line.gracePeriodMs,
    sendKill: line.sendKill,
    progressOnOutput: line.progressOnOutput,
    // HUP, QUIT, USR1, USR2 and ALRM go to the command's group as they are; the first INT or TERM too, and a
    // second one forces with SIGKILL (the toolkit's convention); the group is swept once the command exits
    forwardSignals: true,
    onInterrupt: ({ limit, level, action, error }) => {
      const what = limit === "time" ? "time limit reached" : "memory limit exceeded";
      stderr.write(`x-guard: ${what} (level ${level}): ${action} [${error.message}]\n`);
    },
  });
  const { exitCode, spawnError } = await command.finally(() => pipesBack?.());
  if (spawnError !== undefined) {
    const why = exitCode === GuardExit.NOT_FOUND ? "command not found" : `cannot run: ${spawnError.message}`;
    stderr.write(`x-guard: ${file}: ${why}\n`);
  }
  return exitCode;
}
