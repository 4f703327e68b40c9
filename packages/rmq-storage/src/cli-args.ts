import {
  infoFlagOptions,
  type LogFlags,
  logFlagOptions,
  parseCommandLine,
  parseDurationMs,
  parseHostName,
  parseListenAddress,
  readLogFlags,
  UsageError,
} from "@x/core/internal";
import { ErrorCode, RmqStorageError } from "./errors.js";
import { parseRanges } from "./ranges.js";

/**
 * Where a URL that may hold a password comes from: given on the command line (`--amqp`, `--storage`) or in an
 * environment variable (`AMQP_URL`, `STORAGE_URL`), or a file to read (`--amqp-file`, `--storage-file`).
 */
export type UrlSource = { url: string; from: string } | { file: string; from: string };

/** The environment variables the CLI reads. */
export interface CliEnv {
  AMQP_URL?: string | undefined;
  STORAGE_URL?: string | undefined;
}

/**
 * The source of one URL, by precedence: the flag (`--amqp URL`), then the file flag (`--amqp-file FILE`), then
 * the environment variable (`AMQP_URL`, when set and not empty).
 *
 * @throws UsageError when none is given, or a flag is empty
 */
export function urlSource(
  command: string,
  flag: string,
  value: string | undefined,
  file: string | undefined,
  envName: string,
  env: string | undefined,
): UrlSource {
  if (value !== undefined) {
    if (value === "") throw new UsageError(`--${flag} expects a URL, got ""`);
    return { url: value, from: `--${flag}` };
  }
  if (file !== undefined) {
    if (file === "") throw new UsageError(`--${flag}-file expects a file name, got ""`);
    return { file, from: `--${flag}-file` };
  }
  if (env !== undefined && env !== "") return { url: env, from: envName };
  throw new UsageError(`${command} needs --${flag} URL, --${flag}-file FILE or ${envName}`);
}

/**
 * The broker URL, or the URLs of a cluster's nodes: `--amqp` given several times, or several URLs separated
 * by white space in `AMQP_URL` or in the `--amqp-file` (a URL never contains white space).
 */
export { brokerUrls } from "@x/core/internal";

/**
 * The URL a source names; a file is read as UTF-8 and trimmed. A file that every user may read (mode `o+r`)
 * is refused: it is meant to hold a password (`chmod 600` it, or `640` with a group).
 *
 * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` when the file cannot be read, is readable by every user, or is
 *   empty
 */
export async function readUrl(source: UrlSource): Promise<string> {
  if ("url" in source) return source.url;
  const refuse = (why: string) =>
    new RmqStorageError(ErrorCode.INVALID_OPTION, `${source.from} ${JSON.stringify(source.file)}: ${why}`);
  let text: string;
  try {
    // node:fs from getBuiltinModule, not an import: an ESM import of it also loads fs/promises and the fs
    // streams, which every start of x-rmq-storage would pay (see "Startup" in the README)
    const fs = process.getBuiltinModule("node:fs");
    const mode = fs.statSync(source.file).mode;
    if ((mode & 0o004) !== 0)
      throw refuse(`readable by every user (mode ${(mode & 0o777).toString(8)}); chmod o-r it`);
    text = await fs.promises.readFile(source.file, "utf8");
  } catch (error) {
    if (error instanceof RmqStorageError) throw error;
    throw refuse(`cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const url = text.trim();
  if (url === "") throw refuse("is empty");
  return url;
}

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

/** `--standby` in ms, more than 0 and at most one hour (the `standbyWaitMs` option's range). */
const standby = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const ms = Math.ceil(parseDurationMs("--standby", value));
  if (ms < 1 || ms > 3_600_000)
    throw new UsageError(`--standby expects more than 0 and at most 1h, got ${JSON.stringify(value)}`);
  return ms;
};

/** A command line that asks for `--help` or `--version`: it is answered, and not read further. */
export interface InfoRequest {
  info: true;
  help: boolean;
  version: boolean;
}

/** The {@link InfoRequest} of parsed flags, if they make one. */
const infoRequest = (values: { help?: boolean; version?: boolean }): InfoRequest | undefined =>
  values.help || values.version
    ? { info: true, help: values.help === true, version: values.version === true }
    : undefined;

/** `x-rmq-storage serve`'s command line, read by {@link parseServeArgs}. */
export interface ServeCommandLine {
  info: false;
  amqp: UrlSource;
  storage: UrlSource;
  maxItemsPerWrite: number | undefined;
  maxConcurrentWrites: number | undefined;
  prefetch: number | undefined;
  processes: number | undefined;
  ranges: string[] | undefined;
  standbyWaitMs: number | undefined;
  queueType: "classic" | "quorum" | undefined;
  deliveryLimit: number | undefined;
  prefix: string | undefined;
  heartbeatMs: number | undefined;
  readyFd: string | undefined;
  /**
   * `--metrics`, `--management` and `--metrics-host`: where to serve `/metrics`, the management API it reads,
   * and the host names it answers for besides.
   */
  metrics: { host: string; port: number; management?: string; allowedHosts?: string[] } | undefined;
  /** `--log-level`, `--log-json` (`--json-logs`, deprecated). */
  log: LogFlags;
}

/**
 * Reads `serve`'s arguments (without the command name). Pure: reads no file and no descriptor (`--amqp-file`
 * and `--storage-file` are read by {@link readUrl}, `--ready-fd` checked by the CLI).
 *
 * @throws UsageError for an unknown flag, a missing URL, or a bad value
 */
export function parseServeArgs(args: string[], env: CliEnv): ServeCommandLine | InfoRequest {
  const { values } = parseCommandLine({
    args,
    options: {
      amqp: { type: "string", multiple: true },
      "amqp-file": { type: "string" },
      storage: { type: "string" },
      "storage-file": { type: "string" },
      "max-items-per-write": { type: "string" },
      "max-concurrent-writes": { type: "string" },
      prefetch: { type: "string" },
      processes: { type: "string" },
      ranges: { type: "string" },
      standby: { type: "string" },
      "queue-type": { type: "string" },
      "delivery-limit": { type: "string" },
      prefix: { type: "string" },
      heartbeat: { type: "string" },
      "ready-fd": { type: "string" },
      metrics: { type: "string" },
      management: { type: "string" },
      "metrics-host": { type: "string", multiple: true },
      ...logFlagOptions,
      ...infoFlagOptions,
    },
  });
  const info = infoRequest(values);
  if (info) return info;
  const amqp = urlSource(
    "serve",
    "amqp",
    values.amqp?.join(" "),
    values["amqp-file"],
    "AMQP_URL",
    env.AMQP_URL,
  );
  const storage = urlSource(
    "serve",
    "storage",
    values.storage,
    values["storage-file"],
    "STORAGE_URL",
    env.STORAGE_URL,
  );
  const ranges = values.ranges === undefined ? undefined : parseRanges(values.ranges);
  if (values.ranges !== undefined && ranges === undefined)
    throw new UsageError(
      `--ranges expects hex digits and spans such as 0-7 or 0,3,a-c, got ${JSON.stringify(values.ranges)}`,
    );
  const log = readLogFlags(values);
  const queueType = values["queue-type"];
  if (queueType !== undefined && queueType !== "classic" && queueType !== "quorum")
    throw new UsageError(`--queue-type expects classic or quorum, got ${JSON.stringify(queueType)}`);
  if (values["delivery-limit"] !== undefined && queueType !== "quorum")
    throw new UsageError("--delivery-limit needs --queue-type quorum");
  if (values.management !== undefined && values.metrics === undefined)
    throw new UsageError("--management is read by --metrics: give both, or neither");
  if (values["metrics-host"] !== undefined && values.metrics === undefined)
    throw new UsageError("--metrics-host needs --metrics");
  const allowedHosts = values["metrics-host"]?.map((name) => parseHostName("--metrics-host", name));
  return {
    info: false,
    amqp,
    storage,
    maxItemsPerWrite: positiveInt("--max-items-per-write", values["max-items-per-write"]),
    maxConcurrentWrites: positiveInt("--max-concurrent-writes", values["max-concurrent-writes"]),
    prefetch: positiveInt("--prefetch", values.prefetch),
    processes: positiveInt("--processes", values.processes),
    ranges,
    standbyWaitMs: standby(values.standby),
    queueType,
    deliveryLimit: positiveInt("--delivery-limit", values["delivery-limit"]),
    prefix: values.prefix,
    heartbeatMs: heartbeat(values.heartbeat),
    readyFd: values["ready-fd"],
    metrics:
      values.metrics === undefined
        ? undefined
        : {
            ...parseListenAddress("--metrics", values.metrics),
            ...(values.management === undefined ? {} : { management: values.management }),
            ...(allowedHosts === undefined ? {} : { allowedHosts }),
          },
    log,
  };
}

/** `x-rmq-storage stats`'s command line, read by {@link parseStatsArgs}. */
export interface StatsCommandLine {
  info: false;
  amqp: UrlSource;
  management: string | undefined;
  prefix: string | undefined;
  json: boolean;
  log: LogFlags;
}

/**
 * Reads `stats`' arguments (without the command name). Pure.
 *
 * @throws UsageError for an unknown flag or a missing URL
 */
export function parseStatsArgs(args: string[], env: CliEnv): StatsCommandLine | InfoRequest {
  const { values } = parseCommandLine({
    args,
    options: {
      amqp: { type: "string", multiple: true },
      "amqp-file": { type: "string" },
      management: { type: "string" },
      prefix: { type: "string" },
      json: { type: "boolean" },
      ...logFlagOptions,
      ...infoFlagOptions,
    },
  });
  const info = infoRequest(values);
  if (info) return info;
  return {
    info: false,
    amqp: urlSource("stats", "amqp", values.amqp?.join(" "), values["amqp-file"], "AMQP_URL", env.AMQP_URL),
    management: values.management,
    prefix: values.prefix,
    json: values.json === true,
    log: readLogFlags(values),
  };
}

/** `x-rmq-storage teardown`'s command line, read by {@link parseTeardownArgs}. */
export interface TeardownCommandLine {
  info: false;
  amqp: UrlSource;
  prefix: string | undefined;
  force: boolean;
  /** The storage to drop: only from `--drop-storage` or `--drop-storage-file`, never from `STORAGE_URL`. */
  dropStorage: UrlSource | undefined;
  log: LogFlags;
}

/**
 * Reads `teardown`'s arguments (without the command name). Pure. `STORAGE_URL` is deliberately not read:
 * dropping a storage must be asked for on the command line.
 *
 * @throws UsageError for an unknown flag or a missing URL
 */
export function parseTeardownArgs(args: string[], env: CliEnv): TeardownCommandLine | InfoRequest {
  const { values } = parseCommandLine({
    args,
    options: {
      amqp: { type: "string", multiple: true },
      "amqp-file": { type: "string" },
      prefix: { type: "string" },
      force: { type: "boolean" },
      "drop-storage": { type: "string" },
      "drop-storage-file": { type: "string" },
      ...logFlagOptions,
      ...infoFlagOptions,
    },
  });
  const info = infoRequest(values);
  if (info) return info;
  const drop =
    values["drop-storage"] === undefined && values["drop-storage-file"] === undefined
      ? undefined
      : urlSource(
          "teardown",
          "drop-storage",
          values["drop-storage"],
          values["drop-storage-file"],
          "(no variable)",
          undefined,
        );
  return {
    info: false,
    amqp: urlSource(
      "teardown",
      "amqp",
      values.amqp?.join(" "),
      values["amqp-file"],
      "AMQP_URL",
      env.AMQP_URL,
    ),
    prefix: values.prefix,
    force: values.force === true,
    dropStorage: drop,
    log: readLogFlags(values),
  };
}
