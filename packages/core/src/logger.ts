import { logValue } from "./log-value.js";
import { parseOptions } from "./options.js";
import * as v from "./schema/v.js";

/**
 * One logging method, shaped like pino's: an object of fields and a message, or a message alone.
 */
export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

/**
 * The logger every `@x` library accepts: any pino logger fits, and so does `console`-backed
 * {@link createConsoleLogger}. Libraries default to {@link silentLogger}.
 */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

/** Log levels in increasing severity, with pino's numeric values. */
export const logLevels = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/** A level name accepted by {@link createConsoleLogger}; `silent` prints nothing. */
export type LogLevel = keyof typeof logLevels | "silent";

const noop: LogFn = () => {};

/** A logger that discards everything; the default of every library in the toolkit. */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

/** Options of {@link createConsoleLogger}. */
export interface ConsoleLoggerOptions {
  /** Lowest level printed. Default `"info"`. */
  level?: LogLevel;
  /** Where lines go. Default `process.stderr`: results belong on stdout, logs on stderr. */
  stream?: NodeJS.WritableStream;
  /**
   * One JSON object per line (pino's shape: `level`, `time`, `name`, `msg` and the fields) instead of plain
   * text. Default `false`.
   */
  json?: boolean;
  /** A name added to every line (`name` field in JSON). */
  name?: string;
}

/** The keys of a log line that its fields may not take: the line's level, time, logger name and message. */
const RESERVED_LOG_KEYS: readonly string[] = Object.freeze(["level", "time", "name", "msg", "message"]);

/** `fields` with each key of `RESERVED_LOG_KEYS` renamed `field.<key>`; the object itself when none is. */
function ownKeysKept(fields: object): object {
  if (!RESERVED_LOG_KEYS.some((key) => Object.hasOwn(fields, key))) return fields;
  return Object.fromEntries(
    Object.entries(fields).map(([key, value]) => [
      RESERVED_LOG_KEYS.includes(key) ? `field.${key}` : key,
      value,
    ]),
  );
}

const levelNames = ["debug", "info", "warn", "error", "silent"] as const satisfies readonly LogLevel[];

const optionsSchema = v.strictObject({
  level: v
    .enum(levelNames, { error: `one of ${levelNames.map((l) => `"${l}"`).join(", ")}` })
    .default("info"),
  stream: v
    .custom<NodeJS.WritableStream>(
      (value) => typeof (value as { write?: unknown } | null)?.write === "function",
      { error: "a writable stream (with write())" },
    )
    .default(() => process.stderr),
  json: v.boolean({ error: "true or false" }).default(false),
  name: v.string({ error: "a string" }).optional(),
});

/**
 * A small logger for command-line tools: plain `time LEVEL [name] message key=value` lines, or JSON lines.
 * Fields may hold anything: errors keep their `name`, `message`, `stack` (JSON lines only), own fields and
 * `cause`, as pino's `err` serializer keeps them; a value that contains itself shows `"[Circular]"` instead of
 * throwing. The line's own keys stay its own: a field named `level`, `time`, `name`, `msg` or `message` (a
 * caller's `level: 2`) is written as `field.<name>` (`"field.level":2`), never over the line's level, time, name or
 * message.
 *
 * @param options - level, stream, JSON output and name; see {@link ConsoleLoggerOptions}
 * @throws XError `ERR_X_CORE_INVALID_OPTION` for an unknown option or a bad value (`level: "INFO"`)
 */
export function createConsoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const { level, stream, json, name } = parseOptions(optionsSchema, options, "ERR_X_CORE_INVALID_OPTION");
  const threshold = level === "silent" ? Number.POSITIVE_INFINITY : logLevels[level];

  const method = (levelName: keyof typeof logLevels): LogFn => {
    if (logLevels[levelName] < threshold) return noop;
    return (first: object | string, message?: string) => {
      // an error alone is logged as pino logs it: under `err`, its message as the line's
      const fields = typeof first === "string" ? {} : first instanceof Error ? { err: first } : first;
      const msg =
        typeof first === "string" ? first : (message ?? (first instanceof Error ? first.message : ""));
      const time = new Date();
      const line = json
        ? JSON.stringify(
            logValue({
              level: logLevels[levelName],
              time: time.getTime(),
              name,
              msg,
              ...ownKeysKept(fields),
            }),
          )
        : formatPlain(time, levelName, name, msg, fields);
      stream.write(`${line}\n`);
    };
  };
  return { debug: method("debug"), info: method("info"), warn: method("warn"), error: method("error") };
}

function formatPlain(
  time: Date,
  level: string,
  name: string | undefined,
  msg: string,
  fields: object,
): string {
  const parts = [time.toISOString(), level.toUpperCase().padEnd(5)];
  if (name) parts.push(`[${name}]`);
  if (msg) parts.push(msg);
  for (const [key, value] of Object.entries(ownKeysKept(fields))) {
    parts.push(
      `${key}=${typeof value === "string" ? value : JSON.stringify(logValue(value, { stack: false }))}`,
    );
  }
  return parts.join(" ");
}
