import type { Logger } from "@x/core";
import { clock } from "./clock.js";

/** Something a {@link Ticker} visits at each check. */
export interface Tickable {
  tick(now: number): void;
  readonly logger: Logger;
}

/**
 * One unref'd interval per `checkIntervalMs` value, shared by every MemGuard activation and `{ pid }` poll with
 * that interval, instead of a timer per activation. It stops itself at the first tick that finds no member, so
 * sequential activations reuse the running interval. (TimeGuard activations do not tick: each arms a timer for
 * its own deadline, see `Activation`.)
 */
class Ticker {
  readonly #members = new Set<Tickable>();
  #timer: NodeJS.Timeout | undefined;
  #lastTick = 0;

  constructor(readonly intervalMs: number) {}

  add(member: Tickable): void {
    this.#members.add(member);
    // a timer that stopped ticking (created under fake timers that are gone) is replaced
    if (this.#timer === undefined || Math.abs(clock() - this.#lastTick) > this.intervalMs * 4 + 1000) {
      clearInterval(this.#timer);
      this.#lastTick = clock();
      this.#timer = setInterval(this.#tick, this.intervalMs);
      this.#timer.unref();
    }
  }

  delete(member: Tickable): void {
    this.#members.delete(member);
  }

  readonly #tick = (): void => {
    if (this.#members.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    ticks.pass++;
    const now = clock();
    this.#lastTick = now;
    for (const member of this.#members) {
      try {
        member.tick(now);
      } catch (error) {
        member.logger.error({ err: error }, "process-guard: check failed");
      }
    }
  };
}

/** Shared tick state: `pass` changes at every tick of any ticker (for per-pass sample caches). */
export const ticks = { pass: 0 };

const tickers = new Map<number, Ticker>();

/** The shared ticker for `intervalMs`. */
export function tickerFor(intervalMs: number): Ticker {
  let ticker = tickers.get(intervalMs);
  if (ticker === undefined) {
    ticker = new Ticker(intervalMs);
    tickers.set(intervalMs, ticker);
  }
  return ticker;
}
