// Apart from guarded-command.ts so that x-guard knows its exit statuses without loading what runs a command.

/** The exit statuses `runGuardedCommand` reports besides the command's own (as `timeout(1)`). */
export const GuardedExitCode = {
  /**
   * The time limit was reached (whatever happened next; with `killSignal` or `killAfterMs`, 128 + 9 instead
   * when SIGKILL ended the command, as `timeout(1)` reports it).
   */
  TIMEOUT: 124,
  /** The memory limit was exceeded. */
  MEMORY: 125,
  /** The command exists but cannot be run (not executable, a directory, …). */
  CANNOT_RUN: 126,
  /** The command was not found. */
  NOT_FOUND: 127,
} as const;
