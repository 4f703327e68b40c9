import type { ParseArgsConfig, parseArgs } from "node:util";

// The builtins below are loaded where they are used (process.getBuiltinModule), not imported: an ESM import of a
// builtin builds its whole namespace, getters included (node:util's loads parseArgs, TextDecoder…), which a CLI
// answering --help would pay for nothing.
import { onStdioError } from "./stdio.js";
import { XError } from "./x-error.js";

/** The exit codes every `@x` command uses (sysexits.h for usage and configuration). */
export const ExitCode = {
  /** Success, or a graceful stop on the first SIGINT/SIGTERM. */
  OK: 0,
  /** The work failed. */
  FAILURE: 1,
  /** Bad command line: unknown flag, missing argument. */
  USAGE: 64,
  /** A service the command needs cannot be reached (sysexits' EX_UNAVAILABLE): refused, unknown host, timed out. */
  UNAVAILABLE: 69,
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
    return process.getBuiltinModule("node:util").parseArgs(config);
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
  return 128 + (process.getBuiltinModule("node:os").constants.signals[signal] ?? 0);
}

/**
 * How long after a first SIGINT or SIGTERM further ones still belong to the same stop request, in milliseconds
 * (1 s): see {@link onShutdownSignals}.
 */
export const STOP_REQUEST_WINDOW_MS = 1000;

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
   * How long after the first signal further signals, of any of `signals`, still count as the same stop request
   * and are ignored, in milliseconds. Default {@link STOP_REQUEST_WINDOW_MS} (1 s).
   */
  windowMs?: number;
}

/**
 * The toolkit's signal convention for commands: the first SIGINT or SIGTERM calls `stop` (a graceful stop);
 * further ones within `windowMs` (1 s) of it are the same stop request and are ignored; one that arrives
 * later calls `force` (by default, exit at once).
 *
 * One request often arrives as several signals: timeout(1) sends its signal to the command and then to its
 * whole process group, systemd may signal the main process and then its control group, Ctrl-C in a terminal
 * reaches the whole foreground group while a parent script forwards SIGTERM to its child. None of these may
 * turn a graceful stop into a forced one; a person who means to force it sends the signal again a moment later.
 *
 * @param stop - the graceful stop; its rejection is not handled here, so handle it in `stop`
 * @param options - which signals, what a forcing one does, and the window
 * @returns a function that removes the handlers
 */
export function onShutdownSignals(
  stop: (signal: NodeJS.Signals) => unknown,
  options: ShutdownOptions = {},
): () => void {
  const {
    signals = ["SIGINT", "SIGTERM"],
    force = (signal) => process.exit(signalExitCode(signal)),
    windowMs = STOP_REQUEST_WINDOW_MS,
  } = options;
  let firstAt: number | undefined;
  const handler = (signal: NodeJS.Signals) => {
    if (firstAt === undefined) {
      firstAt = performance.now();
      stop(signal);
    } else if (performance.now() - firstAt >= windowMs) {
      force(signal);
    }
  };
  for (const signal of signals) process.on(signal, handler);
  return () => {
    for (const signal of signals) process.off(signal, handler);
  };
}

/** The removers of the handlers {@link exitQuietlyOnBrokenPipe} installed, for {@link ignoreBrokenPipe}. */
const quietExits = new Set<() => void>();

/**
 * Makes a command exit quietly when the reader of its output goes away (`x-… | head`): an `EPIPE` on stdout
 * or stderr ends the process with `exitCode` instead of an unhandled-error stack trace.
 *
 * @param exitCode - the exit code; default 141 (128 + SIGPIPE), what a shell reports for a C program killed
 *   by the same broken pipe
 * @returns a function that removes the handlers
 */
export function exitQuietlyOnBrokenPipe(exitCode: number = signalExitCode("SIGPIPE")): () => void {
  const remove = onStdioError((error) => {
    if (error.code === "EPIPE") process.exit(exitCode);
    throw error;
  });
  const removeOnce = () => {
    quietExits.delete(removeOnce);
    remove();
  };
  quietExits.add(removeOnce);
  return removeOnce;
}

/**
 * The daemons' rule: a broken pipe on stdout or stderr (the reader of the logs went away: a `| head`, a
 * `| tee` that Ctrl-C ended first) is ignored, and what is written there afterwards is dropped. It replaces
 * the handlers of {@link exitQuietlyOnBrokenPipe}, so a command that exits on a broken pipe while it parses
 * its command line keeps running once it serves.
 *
 * @returns a function that removes the handler
 */
export function ignoreBrokenPipe(): () => void {
  for (const remove of [...quietExits]) remove();
  return onStdioError((error) => {
    if (error.code !== "EPIPE") throw error;
  });
}
