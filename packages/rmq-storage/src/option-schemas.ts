import { type Logger, silentLogger } from "@x/core";
import { z } from "zod";

const logMethods = ["debug", "info", "warn", "error"] as const;

/** A pino-shaped logger (an object with debug/info/warn/error functions), default silent. */
export const loggerSchema = z
  .custom<Logger>(
    (value) =>
      typeof value === "object" &&
      value !== null &&
      logMethods.every((name) => typeof (value as Record<string, unknown>)[name] === "function"),
    { error: "a logger with debug, info, warn and error methods" },
  )
  .default(silentLogger);

/** A whole number of milliseconds ≥ `min`. */
export const msSchema = (min: number, what = "milliseconds") =>
  z
    .number({ error: `a number of ${what}` })
    .int({ error: `an integer number of ${what}` })
    .min(min, { error: `an integer number of ${what} ≥ ${min}` });
