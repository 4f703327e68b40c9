/** An unbounded in-memory FIFO read by one `for await` loop: the stream of job results. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #head = 0;
  #waiter: ((result: IteratorResult<T, undefined>) => void) | undefined;
  #ended = false;
  #pushed = 0;

  /** Items pushed so far. */
  get pushed(): number {
    return this.#pushed;
  }

  /** Items waiting to be read. */
  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    if (this.#ended) throw new Error("push after end");
    this.#pushed++;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter) waiter({ value: item, done: false });
    else this.#items.push(item);
  }

  /** No more items: the reader finishes once it has read what is queued. */
  end(): void {
    this.#ended = true;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return {
      next: () => {
        if (this.#head < this.#items.length) {
          const value = this.#items[this.#head++] as T;
          if (this.#head === this.#items.length) {
            this.#items = [];
            this.#head = 0;
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.#waiter = resolve;
        });
      },
    };
  }
}
