/**
 * The checkpoint's dependency: a stream of reference times (think of a price or a schema-version feed that
 * the results are enriched with). It always carries the newest time only, and it can be taken down and
 * brought back to simulate an outage. One reader.
 */
export class ReferenceFeed implements AsyncIterable<Date> {
  #latest: number | undefined;
  #delivered: number | undefined;
  #down = false;
  #resend = false;
  #closed = false;
  #wake: (() => void) | undefined;

  /** Whether the feed is in an outage. */
  get down(): boolean {
    return this.#down;
  }

  /** The feed has covered event time up to `ms` (epoch ms). */
  advance(ms: number): void {
    this.#latest = ms;
    this.#notify();
  }

  /** Starts an outage: nothing is delivered until {@link comeBack}. */
  goDown(): void {
    this.#down = true;
  }

  /** Ends the outage: the newest time is delivered at once, even if it was delivered before. */
  comeBack(): void {
    this.#down = false;
    this.#resend = true;
    this.#notify();
  }

  /** Ends the stream. */
  close(): void {
    this.#closed = true;
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Date> {
    while (!this.#closed) {
      const latest = this.#latest;
      if (!this.#down && latest !== undefined && (latest !== this.#delivered || this.#resend)) {
        this.#delivered = latest;
        this.#resend = false;
        yield new Date(latest);
        continue;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }
}
