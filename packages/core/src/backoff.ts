import { durationMs } from "./duration-option.js";
import { optionError, parseOptions } from "./options.js";
import * as v from "./schema/v.js";

/** Options of {@link backoffDelay} and {@link Backoff}. All durations in milliseconds. */
export interface BackoffOptions {
  /** The first delay, in ms. Default 100. */
  initialMs?: number;
  /** Each further delay is the previous one times this. Default 2. */
  factor?: number;
  /** No delay is ever longer than this, jitter included, in ms. Default 5 000. */
  maxMs?: number;
  /**
   * Random spread as a fraction of the delay: 0.2 draws from ±20 %; `"full"` draws from [0, delay) ("full
   * jitter", which spreads clients that failed together the most). Default 0.2; 0 disables it.
   */
  jitter?: number | "full";
  /** Source of randomness in [0, 1), for tests. Default `Math.random`. */
  random?: () => number;
}

const INVALID_OPTION = "ERR_X_CORE_INVALID_OPTION";
const jitterError = 'a fraction from 0 to 1, or "full"';

const optionsSchema = v.strictObject({
  initialMs: durationMs().default(100),
  factor: v.number({ error: "a finite number ≥ 1" }).min(1, { error: "a finite number ≥ 1" }).default(2),
  maxMs: durationMs().default(5_000),
  jitter: v
    .union(
      [
        v.number({ error: jitterError }).min(0, { error: jitterError }).max(1, { error: jitterError }),
        v.literal("full"),
      ],
      {
        error: jitterError,
      },
    )
    .default(0.2),
  random: v
    .custom<() => number>((value) => typeof value === "function", { error: "a function returning [0, 1)" })
    .default(() => Math.random),
});

type ParsedOptions = v.Output<typeof optionsSchema>;

const parse = (options: BackoffOptions): ParsedOptions =>
  parseOptions(optionsSchema, options, INVALID_OPTION);

/**
 * The delay before retry number `attempt` (0 for the first retry): `initialMs × factor^attempt`, capped at
 * `maxMs`, then drawn uniformly from ±`jitter` around that, cut at `maxMs`; or, with `jitter: "full"`,
 * drawn from [0, that delay). At the cap the draw is from [`maxMs × (1 − jitter)`, `maxMs`], so clients that
 * keep failing together stay spread out instead of half of them retrying at exactly `maxMs`.
 *
 * @param attempt - how many retries were already made, an integer ≥ 0
 * @param options - see {@link BackoffOptions}
 * @returns the delay in milliseconds
 * @throws XError `ERR_X_CORE_INVALID_OPTION` for an `attempt` that is not an integer ≥ 0, an unknown option,
 *   or a bad value (a negative or NaN duration, one beyond `MAX_DURATION_MS` of `@x/core/internal`, about
 *   24.8 days, a `factor` below 1, a `jitter` outside [0, 1])
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  if (!Number.isSafeInteger(attempt) || attempt < 0)
    throw optionError(INVALID_OPTION, "attempt", attempt, "an integer ≥ 0");
  return delay(attempt, parse(options));
}

function delay(attempt: number, options: ParsedOptions): number {
  const { initialMs, factor, maxMs, jitter, random } = options;
  // 0 × Infinity would be NaN: a zero first delay stays zero however many attempts
  const base = initialMs === 0 ? 0 : Math.min(maxMs, initialMs * factor ** attempt);
  if (jitter === "full") return random() * base;
  const low = Math.max(0, base * (1 - jitter));
  const high = Math.min(maxMs, base * (1 + jitter));
  return low + random() * (high - low);
}

/**
 * Exponential backoff with jitter and a cap, as a small stateful counter: `next()` after each failure,
 * `reset()` after a success.
 *
 * @example
 * ```ts
 * const backoff = new Backoff({ initialMs: 100, maxMs: 5_000 });
 * for (;;) {
 *   try { await connect(); backoff.reset(); break; }
 *   catch { await sleep(backoff.next(), { signal }); }
 * }
 * ```
 */
export class Backoff {
  readonly #options: ParsedOptions;
  #attempt = 0;

  /**
   * @param options - see {@link BackoffOptions}
   * @throws XError `ERR_X_CORE_INVALID_OPTION` for an unknown option or a bad value, as {@link backoffDelay}
   */
  constructor(options: BackoffOptions = {}) {
    this.#options = parse(options);
  }

  /** Retries made since the last reset. */
  get attempt(): number {
    return this.#attempt;
  }

  /** The delay, in ms, to wait before the next retry; each call grows it until the cap. */
  next(): number {
    return delay(this.#attempt++, this.#options);
  }

  /** Starts again from `initialMs`, typically after a success. */
  reset(): void {
    this.#attempt = 0;
  }
}
