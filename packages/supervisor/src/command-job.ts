import type { Logger } from "@x/core";
import { runGuardedCommand } from "@x/process-guard";
import type { Job } from "./storage.js";

/** How {@link runCommandJob} runs a job's command. */
export interface CommandJobOptions {
  /** The program, found through `PATH`. */
  command: string;
  /** Its first arguments; the job's values follow them (see {@link jobArguments}). */
  args: readonly string[];
  /** Time limit, in ms. Default: none. */
  timeoutMs?: number;
  /** Memory limit of the command's process tree, in bytes. Default: none. */
  maxMemoryBytes?: number;
  /**
   * Wait between escalation steps, in ms: after a limit and after a stop (SIGTERM, then SIGINT, SIGTERM,
   * SIGKILL). Default 15 000 ms (5 000 ms between the memory limit's later steps).
   */
  gracePeriodMs?: number;
  /**
   * Where failures to start the command and a time limit's stop are reported. Default: failures are not
   * reported, a time limit's stop is written to stderr as a plain line.
   */
  logger?: Logger;
  /** Called with the command's pid (also its process group id) once it is spawned. */
  onSpawn?: (pid: number) => void;
}

/**
 * The arguments that follow the command's own for one job: the attr path and the payload's non-empty fields
 * (split at spaces), preceded by `--` when one of them starts with `-`. A fetcher file's values are data, never
 * options: behind `--`, `--output=/tmp/x` reaches a command that parses its options with getopt, `parseArgs`,
 * argparse or clap as an operand, and jobs whose values look like no option run exactly as before.
 */
export function jobArguments(job: Job): string[] {
  const values = [job.attrPath, ...job.payload.split(" ").filter((field) => field !== "")];
  return values.some((value) => value.startsWith("-")) ? ["--", ...values] : values;
}

/**
 * Runs `<command> [args…] [--] <attrPath> <field>…` for one job (see {@link jobArguments}) with
 * `@x/process-guard`'s `runGuardedCommand`: in its own process group with inherited stdio, under the limits,
 * the last escalation step being SIGKILL (a job must end eventually). The environment also carries
 * `X_SUPERVISOR_ATTR_PATH` and `X_SUPERVISOR_PAYLOAD`.
 *
 * When `signal` aborts, the group gets SIGTERM, then the escalation every `gracePeriodMs`. While the command
 * runs, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM sent to this process are forwarded to its group as they
 * are (SIGINT and SIGTERM stay the worker's own: they stop it), so a closed terminal or a stray signal never
 * leaves the command running without its limits; if the worker dies anyway, process-guard's reaper kills the
 * group.
 *
 * @returns the exit status to report: the command's own; 124 when the time limit stopped it; 125 when the
 *   memory limit did; 128+n when signal n killed it; 126 when it cannot be executed; 127 when it is not found
 */
export async function runCommandJob(
  job: Job,
  options: CommandJobOptions,
  signal?: AbortSignal,
): Promise<number> {
  const command = runGuardedCommand(options.command, [...options.args, ...jobArguments(job)], {
    timeoutMs: options.timeoutMs,
    maxMemoryBytes: options.maxMemoryBytes,
    gracePeriodMs: options.gracePeriodMs,
    sendKill: true,
    env: { ...process.env, X_SUPERVISOR_ATTR_PATH: job.attrPath, X_SUPERVISOR_PAYLOAD: job.payload },
    signal,
    logger: options.logger,
    onSpawn: options.onSpawn,
    forwardSignals: ["SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM"],
  });
  const { exitCode, limit, spawnError } = await command;
  if (spawnError !== undefined) {
    options.logger?.error({ err: spawnError, command: options.command }, "cannot run the job's command");
  }
  if (limit === "time") {
    const report = `job ${job.attrPath} was interrupted because it was taking too long`;
    // The original's words, as a log line when there is a logger (one JSON object under --log-json)
    if (options.logger) options.logger.warn({ attrPath: job.attrPath, exitCode }, report);
    else process.stderr.write(`${report}\n`);
  }
  return exitCode;
}

/** Sends SIGKILL to the command's process group (the worker's second signal). */
export function killCommandGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}
