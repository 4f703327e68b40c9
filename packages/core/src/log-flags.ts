import { helpLine } from "./cli-program.js";
import { UsageError } from "./command-line.js";
import { createConsoleLogger, type Logger, type LogLevel, logLevels } from "./logger.js";

/**
 * The logging flags of every `@x` command that logs, as `parseArgs` options: `--log-level LEVEL` and
 * `--log-json`; `--json-logs` is a deprecated spelling of `--log-json`, still accepted.
 */
export const logFlagOptions = {
  "log-level": { type: "string" },
  "log-json": { type: "boolean" },
  "json-logs": { type: "boolean" },
} as const;

/** Deprecated flag → the flag that replaces it. */
const deprecatedLogFlags = { "json-logs": "log-json" } as const;

/**
 * Whether a command line asks for JSON logs (`--log-json`, or its deprecated spelling) before any `--`, so
 * that even a usage error, found before the line is parsed, can be logged as JSON.
 *
 * @param args - the command line's arguments
 */
export function asksForJsonLogs(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some(
    (arg) => arg === "--log-json" || arg === "--json-logs",
  );
}

/** The logging flags of a command line, read by {@link readLogFlags}. */
export interface LogFlags {
  /** `--log-level`. Default `"info"`. */
  level: LogLevel;
  /** `--log-json` (or its deprecated spelling). Default `false`. */
  json: boolean;
  /** The deprecated spellings that were used, as `--flag`, each once. */
  deprecated: string[];
}

/**
 * Reads the logging flags from `parseArgs`' values (see {@link logFlagOptions}).
 *
 * @throws UsageError for a level other than debug, info, warn, error or silent
 */
export function readLogFlags(values: {
  "log-level"?: string | undefined;
  "log-json"?: boolean | undefined;
  "json-logs"?: boolean | undefined;
}): LogFlags {
  const level = values["log-level"] ?? "info";
  if (level !== "silent" && !Object.hasOwn(logLevels, level))
    throw new UsageError(
      `--log-level expects debug, info, warn, error or silent, got ${JSON.stringify(level)}`,
    );
  const deprecated = Object.keys(deprecatedLogFlags)
    .filter((flag) => values[flag as keyof typeof deprecatedLogFlags] !== undefined)
    .map((flag) => `--${flag}`);
  return {
    level: level as LogLevel,
    json: values["log-json"] === true || values["json-logs"] === true,
    deprecated,
  };
}

/**
 * The logger of a command: {@link createConsoleLogger} on stderr with the flags' level and format, which
 * first warns, once, about each deprecated flag that was used.
 *
 * @param name - the command, on every line (`"x-supervisor"`)
 * @param flags - from {@link readLogFlags}
 * @param stream - where lines go. Default `process.stderr`.
 */
export function createCommandLogger(
  name: string,
  flags: LogFlags,
  stream: NodeJS.WritableStream = process.stderr,
): Logger {
  const logger = createConsoleLogger({ name, level: flags.level, json: flags.json, stream });
  for (const flag of flags.deprecated) {
    const now = deprecatedLogFlags[flag.slice(2) as keyof typeof deprecatedLogFlags];
    logger.warn(`${flag} is deprecated and will be removed: use --${now}`);
  }
  return logger;
}

/**
 * The help lines of the logging flags, their descriptions starting at `column` (as the rest of the help).
 *
 * @param column - where descriptions start, counted from 0
 */
export function logFlagsHelp(column: number): string {
  return [
    helpLine("--log-level LEVEL", "debug, info, warn, error or silent (default info)", column),
    helpLine("--log-json", "log JSON lines (pino's shape) instead of plain text", column),
  ].join("\n");
}
