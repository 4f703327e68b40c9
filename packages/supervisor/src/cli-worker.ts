import { XError } from "@x/core";
import {
  createCommandLogger,
  ExitCode,
  ignoreBrokenPipe,
  infoFlagsHelp,
  logFlagsHelp,
  onShutdownSignals,
  reportFailure,
  signalExitCode,
} from "@x/core/internal";
import { parseWorkerArgs } from "./cli-args.js";
import { cli } from "./cli-program.js";
import { tlsFileUsage } from "./cli-tls.js";
import { ErrorCode } from "./errors.js";

export const workerUsage = `Usage: x-supervisor worker <socket> [options] -- <command> [args…]
       x-supervisor worker --connect tls://HOST:PORT --tls-cert FILE --tls-key FILE --tls-ca FILE [options]
                           -- <command> [args…]

Asks the supervisor at <socket> (or over mutual TLS) for jobs and runs <command> [args…] <attr-path>
<payload fields…> for each, reporting its exit status. When one of those values starts with -, a -- comes
before them (<command> [args…] -- <attr-path> <payload fields…>), so the command never takes one for an
option. X_SUPERVISOR_ATTR_PATH and X_SUPERVISOR_PAYLOAD carry the raw values.

Options:
  --connect tls://HOST:PORT
                          the supervisor's TLS listener, in place of <socket>; reconnects wait 5 s, then
                          longer (up to 60 s), each wait spread by ±50 %
${tlsFileUsage}
  --timeout DURATION      time limit per job: seconds, or with an s, m, h or d suffix (90, 1.5m, 6h);
                          reports 124 (default: none)
  --max-memory SIZE       memory limit of the job's process tree: bytes, or with a K, M or G suffix
                          (×1024: 500K, 512M, 8G); reports 125
  --idle-delay DURATION   wait after NOJOBS before asking again, written as --timeout (default 60)
${logFlagsHelp(26)}
${infoFlagsHelp(26)}

The first SIGINT or SIGTERM stops the running command (SIGTERM, then escalation), reports how it ended
without taking another job, and exits 0; more within 1 s are the same request (timeout(1) and systemd signal
the worker, then its group); one after that kills the command's process group and exits 130 or 143. The
worker keeps running when the reader of its log goes away.
`;

/** `x-supervisor worker`: resolves to the exit code once the loop has stopped. */
export async function workerCommand(args: string[]): Promise<number> {
  const line = parseWorkerArgs(args);
  const answered = cli.answer(line, workerUsage);
  if (answered !== undefined) return answered;
  const { tls, timeoutMs, maxMemoryBytes, idleDelayMs } = line;
  // The worker's modules (the client, TLS, the guard) load only now, not for --help or a usage error.
  const [{ killCommandGroup, runCommandJob }, { runWorker }, { readTlsFiles }] = await Promise.all([
    import("./command-job.js"),
    import("./run-worker.js"),
    import("./tls-endpoint.js"),
  ]);
  ignoreBrokenPipe();
  const logger = createCommandLogger("x-supervisor worker", line.log);
  if (tls !== undefined) {
    try {
      await readTlsFiles(tls);
    } catch (error) {
      if (!XError.is(error, ErrorCode.TLS)) throw error;
      return reportFailure(logger, "cannot use the TLS files", error, "unusable");
    }
  }
  const controller = new AbortController();
  let running: number | undefined;
  const removeHandlers = onShutdownSignals(
    (signal) => {
      logger.info({ signal }, "stopping gracefully (a signal 1 s or more later kills the job)");
      controller.abort();
    },
    {
      force: (signal) => {
        if (running !== undefined) killCommandGroup(running);
        process.exit(signalExitCode(signal));
      },
    },
  );
  const [program, ...programArgs] = line.command;
  try {
    await runWorker({
      ...(tls === undefined ? { socket: line.socket! } : { tls }),
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
            timeoutMs,
            maxMemoryBytes,
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
