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

/** An integer between `min` and `max`, described as `what`. */
export const intIn = (what: string, min: number, max: number) =>
  z
    .number({ error: `an integer ${what} between ${min} and ${max}` })
    .int({ error: `an integer ${what} between ${min} and ${max}` })
    .min(min, { error: `an integer ${what} between ${min} and ${max}` })
    .max(max, { error: `an integer ${what} between ${min} and ${max}` });

/** Options shared by the server and the client. */
export const brokerOptions = {
  url: z
    .string({ error: "an amqp:// or amqps:// URL" })
    .regex(/^amqps?:\/\/./, { error: "an amqp:// or amqps:// URL" }),
  connectTimeoutMs: intIn("number of milliseconds", 1, 3_600_000).default(30_000),
  heartbeat: intIn("number of seconds", 0, 3_600).default(10),
  prefix: z
    .string({ error: "a name prefix of letters, digits, '_', '-', '.' or ':'" })
    .regex(/^[\w.:-]*$/, { error: "a name prefix of letters, digits, '_', '-', '.' or ':'" })
    .default(""),
  logger: loggerSchema,
};
