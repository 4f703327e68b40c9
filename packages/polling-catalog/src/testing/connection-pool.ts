/**
 * A counting semaphore: at most `size` holders at once, the others served in arrival order. The fake's pool of
 * database connections.
 */
export class ConnectionPool {
  readonly #size: number;
  readonly #waiting: Array<() => void> = [];
  #held = 0;

  /** @param size - how many holders at once (≥ 1) */
  constructor(size: number) {
    this.#size = size;
  }

  /** Waits for a connection; resolves with the function that gives it back (call it once). */
  async acquire(): Promise<() => void> {
    if (this.#held < this.#size) this.#held++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#held--;
    };
  }
}
