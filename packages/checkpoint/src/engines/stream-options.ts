import type { Logger } from "@x/core";
import { durationMs, loggerOption, optionError, parseOptions, v } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "../errors.js";
import { type BrokerEngine, type BrokerStream, brokerStream } from "./broker-stream.js";

/** Options that every engine adapter takes. */
export interface StreamOptions {
  /** Gets a `warn` line for each failed read (a lost connection, a restarting broker). Default silent. */
  logger?: Logger;
  /** The first delay before reading again after a failed read, in ms. Default 100. */
  retryInitialMs?: number;
  /** The longest delay between retries of a failed read, in ms. Default 5 000. */
  retryMaxMs?: number;
}

/** A count, an integer from 1 to `max`. */
export const count = (max: number) =>
  v
    .number({ error: `an integer from 1 to ${max}` })
    .int()
    .min(1)
    .max(max, { error: `an integer from 1 to ${max}` });

/** A start position at a time, `{ time: Date }`, as every engine takes it (a valid date). */
export const timePosition = v.strictObject({
  time: v.date().refine((date) => !Number.isNaN(date.getTime())),
});

/** The fields of {@link StreamOptions}, for each adapter's schema. */
export const streamOptionFields = {
  logger: loggerOption,
  retryInitialMs: durationMs({ min: 1 }).default(100),
  retryMaxMs: durationMs({ min: 1 }).default(5_000),
};

/** Validates an adapter's options against its schema (which includes {@link streamOptionFields}). */
export function parseStreamOptions<S extends v.Schema<unknown>>(schema: S, options: unknown): v.Output<S> {
  return parseOptions(schema, options, ErrorCode.INVALID_OPTION, CheckpointError);
}

/** The stream of an adapter, with the common options applied. */
export function streamOf<R, P>(
  engine: BrokerEngine<R, P>,
  options: { logger: Logger; retryInitialMs: number; retryMaxMs: number },
): BrokerStream<R, P> {
  return brokerStream(engine, {
    logger: options.logger,
    retry: { initialMs: options.retryInitialMs, maxMs: options.retryMaxMs },
  });
}

/**
 * Throws `ERR_X_CHECKPOINT_INVALID_OPTION` for a `seek` to a value that is no position of the engine.
 *
 * @param valid - whether `position` is one
 * @param expected - what a position of this engine is, for the message
 */
export function checkPositionOf(valid: boolean, position: unknown, expected: string): void {
  if (!valid) throw optionError(ErrorCode.INVALID_OPTION, "position", position, expected, CheckpointError);
}
