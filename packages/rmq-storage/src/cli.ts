#!/usr/bin/env node
import { createConsoleLogger, type LogLevel, XError } from "@x/core";
import { ExitCode, onShutdownSignals, parseCommandLine, parseDurationMs, UsageError } from "@x/core/internal";
import { ErrorCode } from "./errors.js";
import { RmqStorageServer } from "./server.js";
import { queueStats } from "./stats.js";
import { isStorageSpec } from "./storage-spec.js";

const usage = {
  main: `Usage: x-rmq-storage <command> [options]

Commands:
  serve    run the storage workers until SIGINT/SIGTERM
  stats    show the depth and consumers of every queue

Run x-rmq-storage <command> --help for a command's options.`,
  serve: `Usage: x-rmq-storage serve --amqp URL --storage SPEC [options]

Runs RmqStorageServer until SIGINT/SIGTERM, then stops gracefully (the in-flight batches are committed,
answered and acknowledged) and exits 0. A second signal exits at once; unacknowledged messages are
redelivered later.

Options:
  --amqp URL          the broker (amqp:// or amqps://)
  --storage SPEC      sqlite:PATH, or postgres://…[?schema=NAME]
  --max-items-per-write N
                      most items per storage call: a queue's messages are merged,
                      whole, up to this many (default 100; 10000 for bulk loads)
  --prefetch N        unacknowledged messages held per queue (default 100)
  --processes N       child processes sharing the 16 ranges (default 1)
  --prefix P          a prefix for every exchange and queue name (default none)
  --heartbeat T       AMQP heartbeat interval in seconds, or with an s, m, h or d suffix
                      (default 10; rounded up to whole seconds; 0 disables heartbeats)
  --log-level LEVEL   debug, info, warn, error or silent (default info)
  --json-logs         log JSON lines instead of plain text
  -h, --help          show this help`,
  stats: `Usage: x-rmq-storage stats --amqp URL [options]

One entry per worker queue (160) and per dead-letter queue (5): messages ready and consumers (passive
declare), messages unacknowledged (management API; null when it cannot be reached).

Options:
  --amqp URL          the broker (amqp:// or amqps://)
  --management URL    the management API (default http://<amqp host>:15672, AMQP credentials)
  --prefix P          the topology's name prefix (default none)
  --json              one JSON object per line instead of a table
  -h, --help          show this help`,
};

const positiveInt = (flag: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new UsageError(`${flag} expects a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
};

/** `--heartbeat` in ms, at most one hour (the `heartbeatMs` option's range). */
const heartbeat = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const ms = Math.ceil(parseDurationMs("--heartbeat", value));
  if (ms > 3_600_000) throw new UsageError(`--heartbeat expects at most 1h, got ${JSON.stringify(value)}`);
  return ms;
};

async function serve(args: string[]): Promise<number> {
  const { values } = parseCommandLine({
    args,
    options: {
      amqp: { type: "string" },
      storage: { type: "string" },
      "max-items-per-write": { type: "string" },
      prefetch: { type: "string" },
      processes: { type: "string" },
      prefix: { type: "string" },
      heartbeat: { type: "string" },
      "log-level": { type: "string" },
      "json-logs": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return print(usage.serve);
  if (!values.amqp) throw new UsageError("serve needs --amqp URL");
  if (!values.storage) throw new UsageError("serve needs --storage sqlite:PATH|postgres://…");
  const heartbeatMs = heartbeat(values.heartbeat);
  const level = (values["log-level"] ?? "info") as LogLevel;
  if (!["debug", "info", "warn", "error", "silent"].includes(level))
    throw new UsageError(
      `--log-level expects debug, info, warn, error or silent, got ${JSON.stringify(level)}`,
    );
  if (!isStorageSpec(values.storage)) {
    process.stderr.write(
      `x-rmq-storage: unsupported --storage ${JSON.stringify(values.storage)} (expected sqlite:PATH or postgres://…)\n`,
    );
    return ExitCode.CONFIG;
  }
  const logger = createConsoleLogger({ level, json: values["json-logs"] === true, name: "x-rmq-storage" });
  const options = {
    url: values.amqp,
    storage: values.storage,
    logger,
    ...defined("maxItemsPerWrite", positiveInt("--max-items-per-write", values["max-items-per-write"])),
    ...defined("prefetch", positiveInt("--prefetch", values.prefetch)),
    ...defined("processes", positiveInt("--processes", values.processes)),
    ...defined("prefix", values.prefix),
    ...defined("heartbeatMs", heartbeatMs),
  };
  const server = await RmqStorageServer.start(options);
  server.on("dead-letter", ({ queue, reason }) => logger.warn({ queue, reason }, "dead-lettered"));
  server.on("storage-error", ({ queue, attempt, error }) =>
    logger.warn({ queue, attempt, err: error }, "storage error"),
  );
  server.on("reconnect", ({ attempt, delayMs }) => logger.warn({ attempt, delayMs }, "reconnecting"));
  await new Promise<void>((resolve) => {
    const remove = onShutdownSignals((signal) => {
      logger.info({ signal }, "stopping gracefully (send the signal again to exit at once)");
      server.stop().then(
        () => {
          remove();
          resolve();
        },
        (error: unknown) => {
          logger.error({ err: error }, "graceful stop failed");
          resolve();
        },
      );
    });
  });
  return ExitCode.OK;
}

async function stats(args: string[]): Promise<number> {
  const { values } = parseCommandLine({
    args,
    options: {
      amqp: { type: "string" },
      management: { type: "string" },
      prefix: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return print(usage.stats);
  if (!values.amqp) throw new UsageError("stats needs --amqp URL");
  const rows = await queueStats({
    url: values.amqp,
    ...defined("management", values.management),
    ...defined("prefix", values.prefix),
  });
  if (values.json) {
    process.stdout.write(rows.map((row) => `${JSON.stringify(row)}\n`).join(""));
    return ExitCode.OK;
  }
  const table = [
    ["queue", "ready", "unacked", "consumers"],
    ...rows.map((r) => [r.queue, show(r.ready), show(r.unacked), show(r.consumers)]),
  ];
  const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? "").length))) ?? [];
  for (const row of table)
    process.stdout.write(
      `${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ")}\n`,
    );
  return ExitCode.OK;
}

const show = (value: number | null) => (value === null ? "-" : String(value));
const defined = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
function print(text: string): number {
  process.stdout.write(`${text}\n`);
  return ExitCode.OK;
}

/** Runs the command line; resolves to the exit code. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === "serve") return await serve(rest);
    if (command === "stats") return await stats(rest);
    if (command === "--help" || command === "-h" || command === "help") return print(usage.main);
    throw new UsageError(
      command === undefined ? "missing command" : `unknown command ${JSON.stringify(command)}`,
    );
  } catch (error) {
    process.stderr.write(`x-rmq-storage: ${(error as Error).message}\n`);
    if (error instanceof UsageError) {
      process.stderr.write(`${usage[command === "serve" || command === "stats" ? command : "main"]}\n`);
      return ExitCode.USAGE;
    }
    if (
      XError.is(error, ErrorCode.INVALID_OPTION) ||
      XError.is(error, ErrorCode.BACKEND) ||
      XError.is(error, ErrorCode.TOPOLOGY)
    )
      return ExitCode.CONFIG;
    return ExitCode.FAILURE;
  }
}

process.exitCode = await main(process.argv.slice(2));
