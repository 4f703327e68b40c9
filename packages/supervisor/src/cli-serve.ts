import {
  createCommandLogger,
  ExitCode,
  ignoreBrokenPipe,
  infoFlagsHelp,
  logFlagsHelp,
  onShutdownSignals,
  reportFailure,
} from "@x/core/internal";
import { parseServeArgs } from "./cli-args.js";
import { supervisorFailureKind } from "./cli-log.js";
import { cli } from "./cli-program.js";
import { tlsFileUsage } from "./cli-tls.js";
import type { startSupervisor } from "./supervisor.js";

export const serveUsage = `Usage: x-supervisor serve <db> <fetchers-dir> <socket> [options]

Runs the daemon: ingests the fetcher files of <fetchers-dir> into the SQLite queue <db> and serves workers on
the Unix socket <socket> (its directory must exist). Logs go to stderr; the daemon runs on if their reader
goes away. The first SIGINT or SIGTERM stops gracefully; more within 1 s are the same request (timeout(1)
and systemd signal the daemon, then its group); one after that exits at once (130/143).

Options:
  --tls HOST:PORT         also serve workers over mutual TLS on HOST:PORT: only clients whose certificate
                          is signed by --tls-ca are answered (TLS 1.2+); SIGHUP re-reads the three files
${tlsFileUsage}
  --max-tls-handshakes N  with --tls: TLS handshakes in progress at once, beyond which a new connection
                          is closed as soon as it is accepted (default 64; apart from --max-connections)
  --tls-handshake-timeout DURATION
                          with --tls: how long a client may take to finish its TLS handshake, in seconds
                          or with an s, m, h or d suffix (default 5)
  --http [HOST:]PORT      serve a read-only page of the queue (/), its data (/queue.json) and Prometheus
                          metrics (/metrics) on HOST:PORT; HOST defaults to 127.0.0.1 (loopback). No
                          authentication: put a reverse proxy in front to expose it
  --http-host NAME        a host name the page answers for besides localhost, HOST and IP addresses (the
                          machine's DNS name, a reverse proxy's); repeatable. Requests that name any other
                          host get 421 (so that a web page cannot read the queue through DNS rebinding)
  --socket-mode MODE      the socket's mode, octal (default 0660); it has it from the moment it appears
  --db-mode MODE          the mode of <db> when the daemon creates it, octal (default 0600); SQLite gives
                          its -wal and -shm files the same. An existing <db> keeps its mode
  --socket-group GROUP    the socket's group, a name or a number (default: the daemon's group)
  --max-connections N     open worker connections, socket and TLS together (past the TLS handshake),
                          beyond which new ones are refused (default 512)
${logFlagsHelp(26)}
${infoFlagsHelp(26)}

Exit codes: 0 after a graceful stop, 64 on a usage error, 78 when something it needs is in use (another
daemon on <db>, whatever name it gives the file; a daemon on <socket>; a port) or cannot be used (a TLS
file, --socket-group, <db>, the socket's directory), 1 for any other failure. A failed start removes what it
created (<db>, its lock, <fetchers-dir>) and leaves what was there before.
`;

/** `x-supervisor serve`: resolves to the exit code once the daemon has stopped. */
export async function serveCommand(args: string[]): Promise<number> {
  const line = parseServeArgs(args);
  const answered = cli.answer(line, serveUsage);
  if (answered !== undefined) return answered;
  const { db, dbMode, fetchersDir, socket, socketMode, socketGroup, maxConnections, tls, http } = line;
  const { maxTlsHandshakes, tlsHandshakeTimeoutMs } = line;
  // The daemon's modules (SQLite, the watcher, metrics, TLS) load only now, not for --help or a usage error.
  const { startSupervisor: start } = await import("./supervisor.js");
  ignoreBrokenPipe();
  const logger = createCommandLogger("x-supervisor", line.log);
  const controller = new AbortController();
  const removeHandlers = onShutdownSignals((signal) => {
    logger.info({ signal }, "stopping gracefully (a signal 1 s or more later exits at once)");
    controller.abort();
  });
  try {
    let sup: Awaited<ReturnType<typeof startSupervisor>>;
    try {
      sup = await start({
        db,
        dbMode,
        fetchersDir,
        socket,
        socketMode,
        ...(socketGroup === undefined ? {} : { socketGroup }),
        maxConnections,
        ...(tls === undefined ? {} : { tls }),
        ...(maxTlsHandshakes === undefined ? {} : { maxTlsHandshakes }),
        ...(tlsHandshakeTimeoutMs === undefined ? {} : { tlsHandshakeTimeoutMs }),
        ...(http === undefined ? {} : { http }),
        logger,
        signal: controller.signal,
      });
    } catch (error) {
      if (controller.signal.aborted) return ExitCode.OK;
      return reportFailure(logger, "cannot start", error, supervisorFailureKind(error));
    }
    const started = sup;
    const reload = () => {
      logger.info("SIGHUP: reading the TLS certificate, key and CA again");
      started.reloadTls().then(
        () => logger.info({ tls }, "TLS files reloaded; new connections use them, open ones go on"),
        (error: unknown) =>
          reportFailure(logger, "TLS reload failed; the files in use stay in use", error, "unusable"),
      );
    };
    if (tls !== undefined) process.on("SIGHUP", reload);
    sup.on("job", (e) => logger.info(e, "job dispatched"));
    sup.on("done", (e) => logger.info(e, "job done"));
    sup.on("ingest", (e) => logger.info(e, "lines ingested"));
    sup.on("run", (e) => logger.info(e, `fetcher run ${e.change}`));
    const [tlsAddress, httpAddress] = [sup.tlsAddress(), sup.httpAddress()];
    const listening = {
      db,
      fetchersDir,
      socket,
      ...(tlsAddress === undefined ? {} : { tls: tlsAddress }),
      ...(httpAddress === undefined ? {} : { http: httpAddress }),
    };
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
