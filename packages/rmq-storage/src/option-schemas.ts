import { durationMs, loggerOption, v } from "@x/core/internal";

/** A whole number of `unit` (milliseconds, bytes, pages…) ≥ `min`. */
export const intAtLeast = (unit: string, min: number) =>
  v
    .number({ error: `a number of ${unit}` })
    .int({ error: `an integer number of ${unit}` })
    .min(min, { error: `an integer number of ${unit} ≥ ${min}` });

/** An integer between `min` and `max`, described as `what`. */
export const intIn = (what: string, min: number, max: number) =>
  v
    .number({ error: `an integer ${what} between ${min} and ${max}` })
    .int({ error: `an integer ${what} between ${min} and ${max}` })
    .min(min, { error: `an integer ${what} between ${min} and ${max}` })
    .max(max, { error: `an integer ${what} between ${min} and ${max}` });

const amqpUrl = v
  .string({ error: "an amqp:// or amqps:// URL" })
  .regex(/^amqps?:\/\/./, { error: "an amqp:// or amqps:// URL" });

/** Options shared by the server and the client. */
export const brokerOptions = {
  url: v.union([amqpUrl, v.array(amqpUrl).min(1)], {
    error: "an amqp:// or amqps:// URL, or a non-empty list of them (the nodes of a cluster)",
  }),
  connectTimeoutMs: durationMs({ min: 1, max: 3_600_000, integer: true }).default(30_000),
  heartbeatMs: durationMs({ max: 3_600_000, integer: true }).default(10_000),
  prefix: v
    .string({ error: "a name prefix of letters, digits, '_', '-', '.' or ':'" })
    .regex(/^[\w.:-]*$/, { error: "a name prefix of letters, digits, '_', '-', '.' or ':'" })
    .default(""),
  logger: loggerOption,
};

/**
 * An option that was renamed before the first release: refused with a message that gives the new name (the
 * declarations no longer have it, so only untyped callers can pass it).
 */
export const renamedOption = (now: string) =>
  v.undefined({ error: `nothing: this option is now ${now}` }).optional();
