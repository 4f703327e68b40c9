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

/**
 * The delay before retry number `attempt` (0 for the first retry): `initialMs × factor^attempt`, capped at
 * `maxMs`, then drawn uniformly from ±`jitter` around that, cut at `maxMs`; or, with `jitter: "full"`,
 * drawn from [0, that delay). At the cap the draw is from [`maxMs × (1 − jitter)`, `maxMs`], so clients that
 * keep failing together stay spread out instead of half of them retrying at exactly `maxMs`.
 *
 * @param attempt - how many retries were already made, an integer ≥ 0
 * @param options - see {@link BackoffOptions}
 * @returns the delay in milliseconds
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const { initialMs = 100, factor = 2, maxMs = 5_000, jitter = 0.2, random = Math.random } = options;
  const base = Math.min(maxMs, initialMs * factor ** Math.max(0, attempt));
  if (jitter === "full") return random() * Math.max(0, base);
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
  readonly #options: BackoffOptions;
  #attempt = 0;

  /** @param options - see {@link BackoffOptions} */
  constructor(options: BackoffOptions = {}) {
    this.#options = options;
  }

  /** Retries made since the last reset. */
  get attempt(): number {
    return this.#attempt;
  }

  /** The delay, in ms, to wait before the next retry; each call grows it until the cap. */
  next(): number {
    return backoffDelay(this.#attempt++, this.#options);
  }

  /** Starts again from `initialMs`, typically after a success. */
  reset(): void {
    this.#attempt = 0;
  }
}
