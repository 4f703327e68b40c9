import {
  createConsoleLogger,
  ExitCode,
  onShutdownSignals,
  parseCommandLine,
  signalExitCode,
  UsageError,
} from "@x/core";
import { parseDuration, parseKiB } from "./cli-units.js";
import { killCommandGroup, runCommandJob } from "./command-job.js";
import { runWorker } from "./run-worker.js";

export const workerUsage = `Usage: x-supervisor worker <socket> [options] -- <command> [args…]

Asks the supervisor at <socket> for jobs and runs <command> [args…] <attr-path> <payload fields…> for each,
reporting its exit status. X_SUPERVISOR_ATTR_PATH and X_SUPERVISOR_PAYLOAD carry the raw values.

Options:
  --timeout S          time limit per job: seconds, or with a suffix s, m, h or d (e.g. 6h); reports 124
  --max-memory SIZE    memory limit of the job's process tree: KiB, or with K, M or G; reports 125
  --idle-delay S       wait after NOJOBS before asking again, in seconds (default 60)
  --help               this help

The first SIGINT or SIGTERM stops the running command (SIGTERM, then escalation) and exits 0 without
reporting it; a second one kills the command's process group and exits 130 or 143.
`;

/** `x-supervisor worker`: resolves to the exit code once the loop has stopped. */
export async function workerCommand(args: string[]): Promise<number> {
  const split = args.indexOf("--");
  const { values, positionals } = parseCommandLine({
    args: split < 0 ? args : args.slice(0, split),
    allowPositionals: true,
    options: {
      timeout: { type: "string" },
      "max-memory": { type: "string" },
      "idle-delay": { type: "string", default: "60" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(workerUsage);
    return ExitCode.OK;
  }
  const command = split < 0 ? [] : args.slice(split + 1);
  if (positionals.length !== 1)
    throw new UsageError("worker takes one argument, <socket>, then -- <command>");
  if (command.length === 0) throw new UsageError("worker needs a command after --");
  const timeoutSeconds =
    values.timeout === undefined ? undefined : parseDuration("--timeout", values.timeout);
  const maxMemoryKiB =
    values["max-memory"] === undefined ? undefined : parseKiB("--max-memory", values["max-memory"]);
  const idleDelayMs = parseDuration("--idle-delay", values["idle-delay"]) * 1000;
  const logger = createConsoleLogger({ name: "x-supervisor worker" });
  const controller = new AbortController();
  let running: number | undefined;
  const removeHandlers = onShutdownSignals(
    (signal) => {
      logger.info({ signal }, "stopping");
      controller.abort();
    },
    {
      force: (signal) => {
        if (running !== undefined) killCommandGroup(running);
        process.exit(signalExitCode(signal));
      },
    },
  );
  const [program, ...programArgs] = command as [string, ...string[]];
  try {
    await runWorker({
      socket: positionals[0]!,
      idleDelayMs,
      signal: controller.signal,
      logger,
      run: async (job, signal) => {
        logger.info({ attrPath: job.attrPath }, "job started");
        const code = await runCommandJob(
          job,
          {
            command: program,
            args: programArgs,
            timeoutSeconds,
            maxMemoryKiB,
            logger,
            onSpawn: (pid) => {
              running = pid;
            },
          },
          signal,
        );
        running = undefined;
        logger.info({ attrPath: job.attrPath, exitCode: code }, "job finished");
        return code;
      },
    });
    return ExitCode.OK;
  } finally {
    removeHandlers();
  }
}
