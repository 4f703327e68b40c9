import { type Logger, silentLogger } from "./logger.js";
import * as v from "./schema/v.js";

/** Whether `value` can serve as a {@link Logger}: an object with `debug`, `info`, `warn` and `error` functions. */
export function isLogger(value: unknown): value is Logger {
  if (typeof value !== "object" || value === null) return false;
  const methods = value as Record<string, unknown>;
  return ["debug", "info", "warn", "error"].every((level) => typeof methods[level] === "function");
}

/**
 * The field of every `logger` option in the toolkit: a pino-shaped {@link Logger}, defaulting to
 * {@link silentLogger}.
 */
export const loggerOption = v
  .custom<Logger>(isLogger, { error: "a logger with debug, info, warn and error functions" })
  .default(() => silentLogger);
