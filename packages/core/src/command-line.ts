import { constants as osConstants } from "node:os";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { XError } from "./x-error.js";

/** The exit codes every `@x` command uses (sysexits.h for usage and configuration). */
export const ExitCode = {
  /** Success, or a graceful stop on the first SIGINT/SIGTERM. */
  OK: 0,
  /** The work failed. */
  FAILURE: 1,
  /** Bad command line: unknown flag, missing argument. */
  USAGE: 64,
  /** A configuration that cannot be used. */
  CONFIG: 78,
} as const;

/** Thrown by {@link parseCommandLine} for a command line that does not fit; commands exit 64 on it. */
export class UsageError extends XError {
  override name = "UsageError";
  /** @param message - what is wrong with the command line */
  constructor(message: string, options?: { cause?: unknown }) {
    super("ERR_X_USAGE", message, options);
  }
}

/**
 * `node:util` `parseArgs` (strict unless `strict: false` is given), whose errors become a {@link UsageError}.
 *
 * @param config - the `parseArgs` configuration (`options`, `allowPositionals`, …); `args` defaults to
 *   `process.argv.slice(2)`
 */
export function parseCommandLine<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    // "Unknown option '--x'. To specify a positional argument starting with a '-', …": the first sentence says it
    const unknown = (cause as { code?: unknown }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION";
    throw new UsageError(unknown ? message.replace(/\. To specify a positional .*$/s, "") : message, {
      cause,
    });
  }
}

/** Exit code of a process that died of `signal`, as shells report it: 128 + the signal number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (osConstants.signals[signal] ?? 0);
}

/** Options of {@link onShutdownSignals}. */
export interface ShutdownOptions {
  /** Signals that stop the command. Default `["SIGINT", "SIGTERM"]`. */
  signals?: NodeJS.Signals[];
  /**
   * Called on a forcing signal (see {@link onShutdownSignals}). Default: exit at once with 128 + the signal
   * number (130 for SIGINT, 143 for SIGTERM).
   */
  force?: (signal: NodeJS.Signals) => void;
  /**
   * How long after the first signal a signal of another kind still counts as part of the same stop request,
   * in milliseconds. Default 2000.
   */
  otherSignalGraceMs?: number;
}

/**
 * The toolkit's signal convention for commands: the first SIGINT or SIGTERM calls `stop` (a graceful stop);
 * the same signal again calls `force` (by default, exit at once), and so does a signal of another kind that
 * arrives `otherSignalGraceMs` or more after the first.
 *
 * A different signal soon after the first is ignored because Ctrl-C in a terminal sends SIGINT to the whole
 * foreground process group: a parent script that forwards SIGTERM to its child must not turn the child's
 * graceful stop into a forced one.
 *
 * @param stop - the graceful stop; its rejection is not handled here, so handle it in `stop`
 * @param options - which signals, and what a forcing one does
 * @returns a function that removes the handlers
 */
export function onShutdownSignals(
  stop: (signal: NodeJS.Signals) => unknown,
  options: ShutdownOptions = {},
): () => void {
  const {
    signals = ["SIGINT", "SIGTERM"],
    force = (signal) => process.exit(signalExitCode(signal)),
    otherSignalGraceMs = 2000,
  } = options;
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const handler = (signal: NodeJS.Signals) => {
    if (first === undefined) {
      first = { signal, at: performance.now() };
      stop(signal);
    } else if (signal === first.signal || performance.now() - first.at >= otherSignalGraceMs) {
      force(signal);
    }
  };
  for (const signal of signals) process.on(signal, handler);
  return () => {
    for (const signal of signals) process.off(signal, handler);
  };
}

/**
 * Makes a command exit quietly when the reader of its output goes away (`x-… | head`): an `EPIPE` on stdout
 * or stderr ends the process with `exitCode` instead of an unhandled-error stack trace.
 *
 * @param exitCode - the exit code; default 141 (128 + SIGPIPE), what a shell reports for a C program killed
 *   by the same broken pipe
 * @returns a function that removes the handlers
 */
export function exitQuietlyOnBrokenPipe(exitCode: number = signalExitCode("SIGPIPE")): () => void {
  const streams = [process.stdout, process.stderr];
  const handler = (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(exitCode);
    throw error;
  };
  for (const stream of streams) stream.on("error", handler);
  return () => {
    for (const stream of streams) stream.off("error", handler);
  };
}
