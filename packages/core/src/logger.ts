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
  /** One JSON object per line (pino's shape: `level`, `time`, `msg` and the fields) instead of plain text. Default `false`. */
  json?: boolean;
  /** A name added to every line (`name` field in JSON). */
  name?: string;
}

/**
 * A small logger for command-line tools: plain `time LEVEL [name] message key=value` lines, or JSON lines.
 *
 * @param options - level, stream, JSON output and name; see {@link ConsoleLoggerOptions}
 */
export function createConsoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const { level = "info", stream = process.stderr, json = false, name } = options;
  const threshold = level === "silent" ? Number.POSITIVE_INFINITY : logLevels[level];

  const method = (levelName: keyof typeof logLevels): LogFn => {
    if (logLevels[levelName] < threshold) return noop;
    return (first: object | string, message?: string) => {
      const fields = typeof first === "string" ? {} : first;
      const msg = typeof first === "string" ? first : (message ?? "");
      const time = new Date();
      const line = json
        ? JSON.stringify(
            { level: logLevels[levelName], time: time.getTime(), name, msg, ...fields },
            jsonValue,
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
  for (const [key, value] of Object.entries(fields)) {
    parts.push(`${key}=${typeof value === "string" ? value : JSON.stringify(value, jsonValue)}`);
  }
  return parts.join(" ");
}

function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) {
    return { name: value.name, message: value.message, ...(value as { code?: string }) };
  }
  return value;
}
