import { XError } from "@x/core";
import {
  createCommandLogger,
  ExitCode,
  infoFlagsHelp,
  logFlagsHelp,
  onShutdownSignals,
} from "@x/core/internal";
import { parseServeArgs } from "./cli-args.js";
import { cli } from "./cli-program.js";
import { tlsFileUsage } from "./cli-tls.js";
import { ErrorCode } from "./errors.js";
import { startSupervisor } from "./supervisor.js";

export const serveUsage = `Usage: x-supervisor serve <db> <fetchers-dir> <socket> [options]

Runs the daemon: ingests the fetcher files of <fetchers-dir> into the SQLite queue <db> and serves workers on
the Unix socket <socket> (its directory must exist). Logs go to stderr. The first SIGINT or SIGTERM stops
gracefully; the same signal again (or the other one, 2 s or more later) exits at once.

Options:
  --tls HOST:PORT         also serve workers over mutual TLS on HOST:PORT: only clients whose certificate
                          is signed by --tls-ca are answered (TLS 1.2+); SIGHUP re-reads the three files
${tlsFileUsage}
  --http [HOST:]PORT      serve a read-only page of the queue (/), its data (/queue.json) and Prometheus
                          metrics (/metrics) on HOST:PORT; HOST defaults to 127.0.0.1 (loopback). No
                          authentication: put a reverse proxy in front to expose it
  --socket-mode MODE      the socket's mode, octal (default 0660); it has it from the moment it appears
  --socket-group GROUP    the socket's group, a name or a number (default: the daemon's group)
  --max-connections N     open worker connections, socket and TLS together, beyond which new ones are
                          refused (default 512)
${logFlagsHelp(26)}
${infoFlagsHelp(26)}

Exit codes: 0 after a graceful stop, 1 when the daemon cannot start (including an unknown --socket-group),
64 on a usage error, 78 when a TLS
file cannot be read or used.
`;

/** `x-supervisor serve`: resolves to the exit code once the daemon has stopped. */
export async function serveCommand(args: string[]): Promise<number> {
  const line = parseServeArgs(args);
  const answered = cli.answer(line, serveUsage);
  if (answered !== undefined) return answered;
  const { db, fetchersDir, socket, socketMode, socketGroup, maxConnections, tls, http } = line;
  const logger = createCommandLogger("x-supervisor", line.log);
  const controller = new AbortController();
  const removeHandlers = onShutdownSignals((signal) => {
    logger.info({ signal }, "stopping");
    controller.abort();
  });
  try {
    let sup: Awaited<ReturnType<typeof startSupervisor>>;
    try {
      sup = await startSupervisor({
        db,
        fetchersDir,
        socket,
        socketMode,
        ...(socketGroup === undefined ? {} : { socketGroup }),
        maxConnections,
        ...(tls === undefined ? {} : { tls }),
        ...(http === undefined ? {} : { http }),
        logger,
        signal: controller.signal,
      });
    } catch (error) {
      if (controller.signal.aborted) return ExitCode.OK;
      logger.error({ err: error }, "cannot start");
      return XError.is(error, ErrorCode.TLS) ? ExitCode.CONFIG : ExitCode.FAILURE;
    }
    const started = sup;
    const reload = () => {
      logger.info("SIGHUP: reading the TLS certificate, key and CA again");
      started.reloadTls().then(
        () => logger.info({ tls }, "TLS files reloaded; new connections use them, open ones go on"),
        (error: unknown) => logger.error({ err: error }, "TLS reload failed; the files in use stay in use"),
      );
    };
    if (tls !== undefined) process.on("SIGHUP", reload);
    sup.on("job", (e) => logger.info(e, "job dispatched"));
    sup.on("done", (e) => logger.info(e, "job done"));
    sup.on("ingest", (e) => logger.info(e, "lines ingested"));
    sup.on("run", (e) => logger.info(e, `fetcher run ${e.change}`));
    const listening = { db, fetchersDir, socket, tls: sup.tlsAddress(), http: sup.httpAddress() };
    logger.info({ ...listening, ...sup.stats() }, "listening");
    await new Promise<void>((resolve) =>
      controller.signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    process.off("SIGHUP", reload);
    await sup.close();
    logger.info(sup.stats(), "stopped");
    return ExitCode.OK;
  } finally {
    removeHandlers();
  }
}
