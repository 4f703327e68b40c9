import {
  infoFlagOptions,
  type LogFlags,
  logFlagOptions,
  parseCommandLine,
  parseDurationMs,
  parseHostName,
  parseListenAddress,
  parseSizeBytes,
  readLogFlags,
  UsageError,
} from "@x/core/internal";
import { refuseStrayTlsFlags, tlsEndpointFromFlags, tlsFileOptions } from "./cli-tls.js";
import type { TlsEndpoint } from "./tls-endpoint.js";

/**
 * Reads a file mode in octal, as `chmod` takes it: `660`, `0660` or `0o660`, at most `0777` (no setuid,
 * setgid or sticky bit).
 *
 * @throws UsageError otherwise
 */
export function parseSocketMode(flag: string, text: string): number {
  const match = /^(?:0o?)?([0-7]{1,4})$/.exec(text);
  const mode = match === null ? Number.NaN : Number.parseInt(match[1]!, 8);
  if (!(mode <= 0o777)) {
    throw new UsageError(`${flag}: ${JSON.stringify(text)} is not an octal file mode from 0 to 0777`);
  }
  return mode;
}

/**
 * Reads a group: decimal digits are a group id (0 to 4294967294), anything else a group name (letters,
 * digits, `_`, `.`, `-`, not starting with `-`, an optional final `$`, at most 64 characters), looked up when
 * the daemon starts.
 *
 * @throws UsageError otherwise
 */
export function parseSocketGroup(flag: string, text: string): number | string {
  if (/^[0-9]{1,10}$/.test(text)) {
    const gid = Number(text);
    if (gid <= 0xfffffffe) return gid;
  } else if (/^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,62}\$?$/.test(text)) {
    return text;
  }
  throw new UsageError(`${flag}: ${JSON.stringify(text)} is not a group name or id`);
}

/**
 * Reads a count: decimal digits, from `min` to `max`.
 *
 * @throws UsageError otherwise
 */
export function parseCount(flag: string, text: string, min: number, max: number): number {
  const value = /^[0-9]{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(`${flag}: ${JSON.stringify(text)} is not a whole number from ${min} to ${max}`);
  }
  return value;
}

/**
 * Reads `--tls-handshake-timeout`: a duration (see `parseDurationMs`) of at least 1 ms, in whole ms.
 *
 * @throws UsageError otherwise
 */
function parseHandshakeTimeout(text: string): number {
  const ms = Math.round(parseDurationMs("--tls-handshake-timeout", text));
  if (ms < 1) throw new UsageError(`--tls-handshake-timeout: ${JSON.stringify(text)} is shorter than 1 ms`);
  return ms;
}

/** `--help` and `--version`: a command line that asks for either is not read further. */
export interface InfoFlags {
  help: boolean;
  version: boolean;
}

/** `x-supervisor serve`'s command line, read by {@link parseServeArgs}. */
export interface ServeCommandLine extends InfoFlags {
  db: string;
  fetchersDir: string;
  socket: string;
  socketMode: number;
  /** `--db-mode`: the mode of the database file when the daemon creates it. */
  dbMode: number;
  socketGroup: number | string | undefined;
  maxConnections: number;
  tls: TlsEndpoint | undefined;
  /** `--max-tls-handshakes` (with `--tls`), or `undefined` for the daemon's default. */
  maxTlsHandshakes: number | undefined;
  /** `--tls-handshake-timeout` in ms (with `--tls`), or `undefined` for the daemon's default. */
  tlsHandshakeTimeoutMs: number | undefined;
  /** `--http`: where to serve the page and metrics, and `--http-host`: the names it answers for besides. */
  http: { host: string; port: number; allowedHosts: string[] } | undefined;
  /** `--log-level`, `--log-json`. */
  log: LogFlags;
}

/**
 * Reads `x-supervisor serve`'s arguments (after `serve`), without touching the system.
 *
 * @throws UsageError for anything the usage does not allow
 */
export function parseServeArgs(args: string[]): ServeCommandLine {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: {
      tls: { type: "string" },
      ...tlsFileOptions,
      http: { type: "string" },
      "http-host": { type: "string", multiple: true },
      "socket-mode": { type: "string", default: "0660" },
      "db-mode": { type: "string", default: "0600" },
      "socket-group": { type: "string" },
      "max-connections": { type: "string", default: "512" },
      "max-tls-handshakes": { type: "string" },
      "tls-handshake-timeout": { type: "string" },
      ...logFlagOptions,
      ...infoFlagOptions,
    },
  });
  const line = {
    help: values.help === true,
    version: values.version === true,
    socketMode: 0o660,
    dbMode: 0o600,
    socketGroup: undefined,
    maxConnections: 512,
    tls: undefined,
    maxTlsHandshakes: undefined,
    tlsHandshakeTimeoutMs: undefined,
    http: undefined,
  } as const;
  if (line.help || line.version)
    return { ...line, db: "", fetchersDir: "", socket: "", log: readLogFlags({}) };
  if (positionals.length !== 3)
    throw new UsageError("serve takes three arguments: <db> <fetchers-dir> <socket>");
  const log = readLogFlags(values);
  const tls = values.tls === undefined ? undefined : tlsEndpointFromFlags("--tls", values.tls, values);
  if (tls === undefined) refuseStrayTlsFlags("--tls", values);
  const handshakes = values["max-tls-handshakes"];
  const handshakeTimeout = values["tls-handshake-timeout"];
  if (tls === undefined && (handshakes ?? handshakeTimeout) !== undefined) {
    throw new UsageError(
      `--${handshakes === undefined ? "tls-handshake-timeout" : "max-tls-handshakes"} needs --tls`,
    );
  }
  if (values.http === undefined && values["http-host"] !== undefined) {
    throw new UsageError("--http-host needs --http");
  }
  const allowedHosts = (values["http-host"] ?? []).map((name) => parseHostName("--http-host", name));
  const [db, fetchersDir, socket] = positionals as [string, string, string];
  return {
    ...line,
    db,
    fetchersDir,
    socket,
    socketMode: parseSocketMode("--socket-mode", values["socket-mode"]),
    dbMode: parseSocketMode("--db-mode", values["db-mode"]),
    socketGroup:
      values["socket-group"] === undefined
        ? undefined
        : parseSocketGroup("--socket-group", values["socket-group"]),
    maxConnections: parseCount("--max-connections", values["max-connections"], 1, 1_000_000),
    tls,
    maxTlsHandshakes:
      handshakes === undefined ? undefined : parseCount("--max-tls-handshakes", handshakes, 1, 100_000),
    tlsHandshakeTimeoutMs:
      handshakeTimeout === undefined ? undefined : parseHandshakeTimeout(handshakeTimeout),
    http:
      values.http === undefined ? undefined : { ...parseListenAddress("--http", values.http), allowedHosts },
    log,
  };
}

/** `x-supervisor worker`'s command line, read by {@link parseWorkerArgs}. */
export interface WorkerCommandLine extends InfoFlags {
  /** The Unix socket, or `undefined` with `tls`. */
  socket: string | undefined;
  tls: TlsEndpoint | undefined;
  timeoutMs: number | undefined;
  maxMemoryBytes: number | undefined;
  idleDelayMs: number;
  /** `--log-level`, `--log-json`. */
  log: LogFlags;
  /** The command and its arguments (after `--`): at least the program. */
  command: [string, ...string[]];
}

/**
 * Reads `x-supervisor worker`'s arguments (after `worker`), without touching the system.
 *
 * @throws UsageError for anything the usage does not allow
 */
export function parseWorkerArgs(args: string[]): WorkerCommandLine {
  const split = args.indexOf("--");
  const { values, positionals } = parseCommandLine({
    args: split < 0 ? args : args.slice(0, split),
    allowPositionals: true,
    options: {
      timeout: { type: "string" },
      "max-memory": { type: "string" },
      "idle-delay": { type: "string", default: "60" },
      connect: { type: "string" },
      ...tlsFileOptions,
      ...logFlagOptions,
      ...infoFlagOptions,
    },
  });
  if (values.help || values.version) {
    return {
      help: values.help === true,
      version: values.version === true,
      log: readLogFlags({}),
      socket: undefined,
      tls: undefined,
      timeoutMs: undefined,
      maxMemoryBytes: undefined,
      idleDelayMs: 60_000,
      command: [""],
    };
  }
  const command = split < 0 ? [] : args.slice(split + 1);
  if (values.connect === undefined && positionals.length !== 1)
    throw new UsageError("worker takes one argument, <socket> (or --connect tls://…), then -- <command>");
  if (values.connect !== undefined && positionals.length !== 0)
    throw new UsageError("worker takes either <socket> or --connect tls://…, not both");
  if (values.connect !== undefined && !values.connect.startsWith("tls://"))
    throw new UsageError(`--connect: ${JSON.stringify(values.connect)} is not tls://HOST:PORT`);
  const tls =
    values.connect === undefined
      ? undefined
      : tlsEndpointFromFlags("--connect", values.connect.slice("tls://".length), values);
  if (tls === undefined) refuseStrayTlsFlags("--connect", values);
  if (command.length === 0) throw new UsageError("worker needs a command after --");
  return {
    help: false,
    version: false,
    log: readLogFlags(values),
    socket: tls === undefined ? positionals[0]! : undefined,
    tls,
    timeoutMs: values.timeout === undefined ? undefined : parseDurationMs("--timeout", values.timeout),
    maxMemoryBytes:
      values["max-memory"] === undefined ? undefined : parseSizeBytes("--max-memory", values["max-memory"]),
    idleDelayMs: parseDurationMs("--idle-delay", values["idle-delay"]),
    command: command as [string, ...string[]],
  };
}

/** `x-supervisor status`'s command line, read by {@link parseStatusArgs}. */
export interface StatusCommandLine extends InfoFlags {
  db: string;
  json: boolean;
  log: LogFlags;
}

/**
 * Reads `x-supervisor status`'s arguments (after `status`).
 *
 * @throws UsageError for anything the usage does not allow
 */
export function parseStatusArgs(args: string[]): StatusCommandLine {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { json: { type: "boolean", default: false }, ...logFlagOptions, ...infoFlagOptions },
  });
  const info = { help: values.help === true, version: values.version === true };
  if (info.help || info.version) return { ...info, db: "", json: values.json, log: readLogFlags({}) };
  if (positionals.length !== 1) throw new UsageError("status takes exactly one argument: <db>");
  return { ...info, db: positionals[0]!, json: values.json, log: readLogFlags(values) };
}

/** `x-supervisor queue-html`'s command line, read by {@link parseQueueHtmlArgs}. */
export interface QueueHtmlCommandLine extends InfoFlags {
  db: string;
  out: string;
  log: LogFlags;
}

/**
 * Reads `x-supervisor queue-html`'s arguments (after `queue-html`).
 *
 * @throws UsageError for anything the usage does not allow
 */
export function parseQueueHtmlArgs(args: string[]): QueueHtmlCommandLine {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { ...logFlagOptions, ...infoFlagOptions },
  });
  const info = { help: values.help === true, version: values.version === true };
  if (info.help || info.version) return { ...info, db: "", out: "", log: readLogFlags({}) };
  if (positionals.length !== 2) throw new UsageError("queue-html takes two arguments: <db> <out.html>");
  return { ...info, db: positionals[0]!, out: positionals[1]!, log: readLogFlags(values) };
}
