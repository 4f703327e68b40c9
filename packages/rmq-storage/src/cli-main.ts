import type { Logger } from "@x/core";
import {
  asksForJsonLogs,
  cliProgram,
  createCommandLogger,
  ExitCode,
  exitQuietlyOnBrokenPipe,
  ignoreBrokenPipe,
  infoFlagsHelp,
  type LogFlags,
  logFlagsHelp,
  onShutdownSignals,
  readLogFlags,
  redactUrl,
  reportFailure,
  trackCreatedPaths,
  UsageError,
} from "@x/core/internal";
import {
  brokerUrls,
  type InfoRequest,
  parseServeArgs,
  parseStatsArgs,
  parseTeardownArgs,
  readUrl,
  type ServeCommandLine,
  type StatsCommandLine,
  type TeardownCommandLine,
} from "./cli-args.js";
import { rmqStorageFailureKind } from "./cli-failure.js";
import { ErrorCode, RmqStorageError } from "./errors.js";
import { announceReady, READY_LINE, readyFd } from "./readiness.js";

const cli = cliProgram("x-rmq-storage", import.meta.url);

const usage = {
  main: `Usage: x-rmq-storage <command> [options]

Commands:
  serve     run the storage workers until SIGINT/SIGTERM
  stats     show the depth and consumers of every queue
  teardown  delete the queues and exchanges of a topology

Options:
${infoFlagsHelp(14)}

Run x-rmq-storage <command> --help for a command's options.`,
  serve: `Usage: x-rmq-storage serve [--amqp URL] [--storage SPEC] [options]

Runs RmqStorageServer. Once every queue of its ranges has a consumer it prints the line "${READY_LINE}" on
stdout (or writes it to --ready-fd), and tells systemd READY=1 when NOTIFY_SOCKET is set. On SIGINT or
SIGTERM it stops gracefully (the in-flight batches are committed, answered and acknowledged) and exits 0.
Further signals within 1 s are the same request (timeout(1) and systemd signal the process, then its
group); one 1 s or more after the first exits at once (130/143);
unacknowledged messages are redelivered later. Logs go to stderr.

Keep passwords out of the command line (ps shows it): each URL is read from its flag, else from
its file flag, else from its environment variable (AMQP_URL, STORAGE_URL). A file holds the URL
alone (surrounding white space ignored) and must not be readable by every user.

Options:
  --amqp URL          the broker (amqp:// or amqps://); default $AMQP_URL; repeat it
                      for the nodes of a cluster (or separate URLs with spaces in
                      AMQP_URL or the file): a lost connection moves to the next
  --amqp-file FILE    read the broker URL from FILE
  --storage SPEC      sqlite:PATH, or postgres://…[?schema=NAME]; default $STORAGE_URL
  --storage-file FILE read the storage spec from FILE
  --max-items-per-write N
                      most items per storage call: the messages a queue holds are
                      merged, whole, up to this many, never waiting for more
                      (default 10000; 100 was the default before)
  --max-concurrent-writes N
                      storage calls in flight at once (per process); a queue that
                      waits for one gathers its messages into a larger write
                      (default 4)
  --prefetch N        unacknowledged messages held per queue
                      (default 2 x max-items-per-write / 1000: 20)
  --ranges R          serve only these ranges (first hex digits of the ids):
                      0-7, 8-f, 0,3,a-c (default all 16: 0-f)
  --standby T         be a standby for these ranges: take a queue only once another
                      server consumes it, or after T seconds (s, m, h, d suffixes
                      allowed) if none does; on every (re)connect (default: active)
  --processes N       child processes sharing the ranges (default 1)
  --queue-type T      classic (default) or quorum: quorum queues, replicated on the
                      nodes of a cluster; every server of a topology uses the same
  --delivery-limit N  with --queue-type quorum: dead-letter a message after N failed
                      deliveries (default 20)
  --prefix P          name every exchange and queue P.<name> (default: no prefix)
  --heartbeat T       AMQP heartbeat interval in seconds, or with an s, m, h or d suffix
                      (default 10; rounded up to whole seconds; 0 disables heartbeats)
  --ready-fd N        write the ready line to file descriptor N (then close it) instead of stdout
  --metrics [HOST:]PORT
                      serve Prometheus metrics at http://HOST:PORT/metrics (HOST defaults
                      to 127.0.0.1; no authentication: keep it on loopback or behind a proxy)
  --management URL    the management API the metrics read to tell active from standby
                      queues (default as for stats; none for amqp:// to another host)
  --metrics-host NAME a host name /metrics answers for besides localhost, HOST and IP
                      addresses (the machine's DNS name); repeatable. Any other Host
                      header gets 421, so that a web page cannot read the metrics
${logFlagsHelp(22)}
                      (--json-logs, its former spelling, still works but is deprecated)
${infoFlagsHelp(22)}`,
  stats: `Usage: x-rmq-storage stats [--amqp URL] [options]

One entry per worker queue (160) and per dead-letter queue (5): messages ready and consumers (passive
declare), messages unacknowledged and the active consumer, named by its connection ("x-rmq-storage
<host> pid <pid> ranges <ranges>[ standby]" for a server) (management API; null when it cannot be
reached, with a warning on stderr). Exits 1, printing nothing, when no queue of the prefix exists.

Options:
  --amqp URL          the broker (amqp:// or amqps://); default $AMQP_URL
  --amqp-file FILE    read the broker URL from FILE (not readable by every user)
  --management URL    the management API, with the AMQP credentials unless it has its own
                      (default https://<host>:15671 for amqps://, http://<host>:15672 for
                      amqp:// to a loopback host; required for amqp:// to any other host:
                      without it stats exits 78 rather than send a password in clear)
  --prefix P          the topology's name prefix (default none)
  --json              one JSON object per line instead of a table
${logFlagsHelp(22)}
${infoFlagsHelp(22)}`,
  teardown: `Usage: x-rmq-storage teardown [--amqp URL] [options]

Deletes exactly the queues (160 worker queues, 5 dead-letter queues) and exchanges (5, and their 5
dead-letter exchanges) of the topology named by --prefix, and nothing else; names that do not exist are
skipped. Refuses, deleting nothing, while a queue has a consumer or holds messages, unless --force.
Prints what it deleted.

Options:
  --amqp URL            the broker (amqp:// or amqps://); default $AMQP_URL
  --amqp-file FILE      read the broker URL from FILE (not readable by every user)
  --prefix P            the topology's name prefix (default none: the unprefixed names)
  --force               delete queues in use too (their messages are lost)
  --drop-storage SPEC   also drop this storage: sqlite:PATH (the file) or
                        postgres://…[?schema=NAME] (the storage's tables and the schema);
                        never taken from STORAGE_URL
  --drop-storage-file FILE
                        read the storage to drop from FILE (not readable by every user)
${logFlagsHelp(24)}
${infoFlagsHelp(24)}`,
};

type Command = keyof typeof usage;

/**
 * Runs a command's work with its logger: a failure is logged as one line (one JSON object under
 * `--log-json`) and exits with its kind's status (see the root README's table); usage errors go on up.
 */
async function reported(
  name: string,
  log: LogFlags,
  what: string,
  work: (logger: Logger) => Promise<number>,
): Promise<number> {
  const logger = createCommandLogger(name, log);
  try {
    return await work(logger);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    return reportFailure(logger, what, error, rmqStorageFailureKind(error));
  }
}

/** The files a `sqlite:PATH` storage creates (none for another storage or an in-memory one). */
function sqliteFiles(spec: string): string[] {
  const path = spec.startsWith("sqlite:") ? spec.slice("sqlite:".length) : "";
  return path === "" || path === ":memory:" ? [] : [path, `${path}-wal`, `${path}-shm`, `${path}-journal`];
}

async function serve(args: string[]): Promise<number> {
  const line = parseServeArgs(args, process.env);
  if (line.info) return answer(line, usage.serve);
  const fd = readyFd(line.readyFd);
  return reported("x-rmq-storage", line.log, "cannot start", (logger) => serveWith(line, fd, logger));
}

async function serveWith(line: ServeCommandLine, fd: number | undefined, logger: Logger): Promise<number> {
  // What each command needs (amqplib, the storages, the server) loads once its command line is right: --help
  // and usage errors load none of it.
  const [{ redactUrls }, { RmqStorageServer }, { isStorageSpec }] = await Promise.all([
    import("./connect.js"),
    import("./server.js"),
    import("./storage-spec.js"),
  ]);
  const [url, storage] = [brokerUrls(await readUrl(line.amqp)), await readUrl(line.storage)];
  if (!isStorageSpec(storage))
    throw new RmqStorageError(
      ErrorCode.INVALID_OPTION,
      `unsupported storage from ${line.storage.from}: ${JSON.stringify(redactUrl(storage))} (expected sqlite:PATH or postgres://…)`,
    );
  const options = {
    url,
    storage,
    logger,
    ...defined("maxItemsPerWrite", line.maxItemsPerWrite),
    ...defined("maxConcurrentWrites", line.maxConcurrentWrites),
    ...defined("prefetch", line.prefetch),
    ...defined("processes", line.processes),
    ...defined("ranges", line.ranges),
    ...defined("standbyWaitMs", line.standbyWaitMs),
    ...defined("queueType", line.queueType),
    ...defined("deliveryLimit", line.deliveryLimit),
    ...defined("prefix", line.prefix),
    ...defined("heartbeatMs", line.heartbeatMs),
    ...defined("metrics", line.metrics),
  };
  // A server must not die because whoever read its logs went away (a `| tee` that a terminal's Ctrl-C ended
  // first): the graceful stop goes on.
  ignoreBrokenPipe();
  // Listen before starting: a signal that arrives during the start stops the server once it has started.
  let removeSignals = () => {};
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    removeSignals = onShutdownSignals(resolve);
  });
  let stopping = false;
  void signalled.then(() => {
    stopping = true;
  });
  logger.info({ url: redactUrls(url), storage: redactUrl(storage) }, "starting");
  // A start that fails removes the SQLite file it created, and nothing that was there before.
  const created = trackCreatedPaths(sqliteFiles(storage));
  try {
    const server = await RmqStorageServer.start(options).catch((error: unknown) => {
      created.remove();
      throw error;
    });
    server.on("dead-letter", ({ queue, reason }) => logger.warn({ queue, reason }, "dead-lettered"));
    server.on("storage-error", ({ queue, attempt, error }) =>
      logger.warn({ queue, attempt, err: error }, "storage error"),
    );
    server.on("reconnect", ({ attempt, delayMs }) => logger.warn({ attempt, delayMs }, "reconnecting"));
    if (!stopping) announceReady(fd, logger);
    const signal = await signalled;
    logger.info({ signal }, "stopping gracefully (a signal 1 s or more later exits at once)");
    await server.stop().catch((error: unknown) => logger.error({ err: error }, "graceful stop failed"));
    return ExitCode.OK;
  } finally {
    removeSignals();
  }
}

async function stats(args: string[]): Promise<number> {
  const line = parseStatsArgs(args, process.env);
  if (line.info) return answer(line, usage.stats);
  return reported("x-rmq-storage stats", line.log, "cannot read the queues", (logger) =>
    statsOf(line, logger),
  );
}

async function statsOf(line: StatsCommandLine, logger: Logger): Promise<number> {
  const { queueStats } = await import("./stats.js");
  const rows = await queueStats({
    url: brokerUrls(await readUrl(line.amqp)),
    ...defined("management", line.management),
    ...defined("prefix", line.prefix),
    logger,
  });
  if (rows.every((row) => row.ready === null)) {
    logger.error(
      { prefix: line.prefix ?? "" },
      `no queue of prefix ${JSON.stringify(line.prefix ?? "")} exists on the broker: is the prefix right, and has x-rmq-storage serve declared its topology?`,
    );
    return ExitCode.FAILURE;
  }
  if (line.json) {
    process.stdout.write(rows.map((row) => `${JSON.stringify(row)}\n`).join(""));
    return ExitCode.OK;
  }
  const table = [
    ["queue", "ready", "unacked", "consumers", "active"],
    ...rows.map((r) => [r.queue, show(r.ready), show(r.unacked), show(r.consumers), r.active ?? "-"]),
  ];
  const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? "").length))) ?? [];
  for (const row of table)
    process.stdout.write(
      `${row
        .map((cell, i) =>
          i === 0 ? cell.padEnd(widths[i] ?? 0) : i === row.length - 1 ? cell : cell.padStart(widths[i] ?? 0),
        )
        .join("  ")}\n`,
    );
  return ExitCode.OK;
}

const show = (value: number | null) => (value === null ? "-" : String(value));
const defined = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
/** Answers `--help` or `--version`. */
const answer = (request: InfoRequest, text: string): number => cli.answer(request, text) ?? ExitCode.OK;

async function teardown(args: string[]): Promise<number> {
  const line = parseTeardownArgs(args, process.env);
  if (line.info) return answer(line, usage.teardown);
  return reported("x-rmq-storage teardown", line.log, "cannot tear down", () => teardownOf(line));
}

async function teardownOf(line: TeardownCommandLine): Promise<number> {
  const [{ deleteTopology }, { isStorageSpec, openStorage }] = await Promise.all([
    import("./teardown.js"),
    import("./storage-spec.js"),
  ]);
  const url = brokerUrls(await readUrl(line.amqp));
  const spec = line.dropStorage === undefined ? undefined : await readUrl(line.dropStorage);
  if (spec !== undefined && !isStorageSpec(spec))
    throw new RmqStorageError(
      ErrorCode.INVALID_OPTION,
      `unsupported storage to drop: ${JSON.stringify(redactUrl(spec))} (expected sqlite:PATH or postgres://…)`,
    );
  const deleted = await deleteTopology({ url, force: line.force, ...defined("prefix", line.prefix) });
  process.stdout.write(
    `deleted ${deleted.queues.length} queues and ${deleted.exchanges.length} exchanges of prefix ${JSON.stringify(line.prefix ?? "")}\n`,
  );
  if (spec !== undefined) {
    const storage = await openStorage(spec);
    await storage.drop();
    process.stdout.write("dropped the storage\n");
  }
  return ExitCode.OK;
}

const commands: Record<Exclude<Command, "main">, (args: string[]) => Promise<number>> = {
  serve,
  stats,
  teardown,
};
const isCommand = (name: string | undefined): name is Exclude<Command, "main"> =>
  name !== undefined && name !== "main" && Object.hasOwn(commands, name);

/** Runs the command line; resolves to the exit code. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  exitQuietlyOnBrokenPipe();
  try {
    if (isCommand(command)) return await commands[command](rest);
    const answered = cli.answer(
      {
        help: command === "--help" || command === "-h" || command === "help",
        version: command === "--version",
      },
      usage.main,
    );
    if (answered !== undefined) return answered;
    throw new UsageError(
      command === undefined ? "missing command" : `unknown command ${JSON.stringify(command)}`,
    );
  } catch (error) {
    if (error instanceof UsageError)
      return cli.usageError(error, isCommand(command) ? command : undefined, asksForJsonLogs(rest));
    const logger = createCommandLogger("x-rmq-storage", readLogFlags({}));
    return reportFailure(logger, "failed", error, rmqStorageFailureKind(error));
  }
}

/** Runs x-rmq-storage with the process's arguments (started by cli.ts); sets the exit code. */
export async function run(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2));
}
