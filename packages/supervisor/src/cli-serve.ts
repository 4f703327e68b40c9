import { createConsoleLogger, type LogLevel, logLevels } from "@x/core";
import { ExitCode, onShutdownSignals, parseCommandLine, UsageError } from "@x/core/internal";
import { startSupervisor } from "./supervisor.js";

export const serveUsage = `Usage: x-supervisor serve <db> <fetchers-dir> <socket> [options]

Runs the daemon: ingests the fetcher files of <fetchers-dir> into the SQLite queue <db> and serves workers on
the Unix socket <socket>. Logs go to stderr. The first SIGINT or SIGTERM stops gracefully; a second one exits
at once.

Options:
  --log-level LEVEL   debug, info, warn, error or silent (default info)
  --log-json          log JSON lines instead of plain text
  --help              this help
`;

/** `x-supervisor serve`: resolves to the exit code once the daemon has stopped. */
export async function serveCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: {
      "log-level": { type: "string", default: "info" },
      "log-json": { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(serveUsage);
    return ExitCode.OK;
  }
  if (positionals.length !== 3)
    throw new UsageError("serve takes three arguments: <db> <fetchers-dir> <socket>");
  const level = values["log-level"];
  if (level !== "silent" && !(level in logLevels))
    throw new UsageError(`--log-level: unknown level ${level}`);
  const logger = createConsoleLogger({
    level: level as LogLevel,
    json: values["log-json"],
    name: "x-supervisor",
  });
  const [db, fetchersDir, socket] = positionals as [string, string, string];
  const controller = new AbortController();
  const removeHandlers = onShutdownSignals((signal) => {
    logger.info({ signal }, "stopping");
    controller.abort();
  });
  try {
    let sup: Awaited<ReturnType<typeof startSupervisor>>;
    try {
      sup = await startSupervisor({ db, fetchersDir, socket, logger, signal: controller.signal });
    } catch (error) {
      if (controller.signal.aborted) return ExitCode.OK;
      logger.error({ err: error }, "cannot start");
      return ExitCode.FAILURE;
    }
    sup.on("job", (e) => logger.info(e, "job dispatched"));
    sup.on("done", (e) => logger.info(e, "job done"));
    sup.on("ingest", (e) => logger.info(e, "lines ingested"));
    sup.on("run", (e) => logger.info(e, `fetcher run ${e.change}`));
    logger.info({ db, fetchersDir, socket, ...sup.stats() }, "listening");
    await new Promise<void>((resolve) =>
      controller.signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    await sup.close();
    logger.info(sup.stats(), "stopped");
    return ExitCode.OK;
  } finally {
    removeHandlers();
  }
}
