import { type Logger, silentLogger } from "@x/core";
import { z } from "zod";

/** A zod field for a pino-shaped `logger` option, defaulting to the silent logger. */
export const loggerSchema = z
  .custom<Logger>(
    (value) =>
      typeof value === "object" &&
      value !== null &&
      ["debug", "info", "warn", "error"].every(
        (m) => typeof (value as Record<string, unknown>)[m] === "function",
      ),
    { error: "a logger with debug, info, warn and error methods" },
  )
  .default(silentLogger);
