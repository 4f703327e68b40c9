/**
 * A counting window: room for {@link InFlightWindow.limit} units, taken and given back, with waiters woken in
 * order.
 *
 * The client bounds with one what it holds for its writes: the items of the messages it has formed whose
 * calls the server has not answered yet (published, or waiting to be republished after a reconnect). A write
 * forms its messages lazily and takes room here for each one before publishing it, so a call of any size
 * holds at most `limit` items' references at a time, and the broker never holds more of a client's unanswered
 * work than that either. The server bounds with one its storage calls in flight (`maxConcurrentWrites`, one
 * unit per call).
 */
export class InFlightWindow {
  /** Most items held at once; a single message larger than this still goes, alone. */
  readonly limit: number;
  #held = 0;
  #peak = 0;
  #waiting: Array<() => void> = [];

  /** @param limit most items held at once, an integer ≥ 1 */
  constructor(limit: number) {
    this.limit = limit;
  }

  /** Items held now. */
  get held(): number {
    return this.#held;
  }

  /** The most items ever held at once (for tests and benchmarks). */
  get peak(): number {
    return this.#peak;
  }

  /** Calls waiting for room. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Takes room for `items`, waiting while that would pass the limit (nothing held: any message fits).
   * Resolves `false` without taking anything once `cancelled()` is true (it is asked after each wake-up).
   */
  async acquire(items: number, cancelled: () => boolean): Promise<boolean> {
    while (!cancelled() && this.#held > 0 && this.#held + items > this.limit)
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    if (cancelled()) return false;
    this.#held += items;
    this.#peak = Math.max(this.#peak, this.#held);
    return true;
  }

  /** Gives back the room of `items` and wakes the waiters (in order; each looks again). */
  release(items: number): void {
    this.#held -= items;
    this.wake();
  }

  /** Wakes every waiter so that it looks again (at its `cancelled()` too). */
  wake(): void {
    for (const resume of this.#waiting.splice(0)) resume();
  }
}
