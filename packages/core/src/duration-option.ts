import * as v from "./schema/v.js";
import { MAX_DURATION_MS } from "./units.js";

/** Bounds of a {@link durationMs} option. */
export interface DurationBounds {
  /** Smallest value accepted, in ms. Default 0. */
  min?: number;
  /** Refuse `min` itself too (for a duration that must be more than `min`). Default `false`. */
  exclusiveMin?: boolean;
  /** Largest value accepted, in ms, at most {@link MAX_DURATION_MS}. Default {@link MAX_DURATION_MS}. */
  max?: number;
  /** Whole milliseconds only. Default `false`. */
  integer?: boolean;
}

/**
 * The schema of a duration option, in milliseconds: a finite number from `min` (default 0) to `max`
 * (default {@link MAX_DURATION_MS}, the longest a Node timer can wait, about 24.8 days: a longer one would fire
 * at once). Every duration option of the toolkit is declared with it, so that all refuse the same values with
 * the same words; {@link parseOptions} turns a refusal into the package's `…_INVALID_OPTION`.
 *
 * @example
 * ```ts
 * const schema = v.strictObject({ idleDelayMs: durationMs().default(60_000) });
 * ```
 */
export function durationMs(bounds: DurationBounds = {}) {
  const { min = 0, exclusiveMin = false, max = MAX_DURATION_MS, integer = false } = bounds;
  const error = `${integer ? "a whole number of" : "a duration in"} ms ${exclusiveMin ? "more than" : "from"} ${min} to ${describeMax(max)}`;
  const number = v.number({ error });
  const whole = integer ? number.int({ error }) : number;
  const low = exclusiveMin ? whole.gt(min, { error }) : whole.min(min, { error });
  return low.max(Math.min(max, MAX_DURATION_MS), { error });
}

function describeMax(max: number): string {
  if (max >= MAX_DURATION_MS) return `${MAX_DURATION_MS} (about 24.8 days, the longest timer)`;
  return String(max);
}
