/**
 * What a client delivered to a broker session and the stream has not read yet. The client pushes; each read
 * takes everything there is, waiting while there is nothing. Once ended, a read takes what is left, then
 * rejects with the reason the inbox ended.
 */
export class Inbox<M> {
  #items: M[] = [];
  #end: { reason: unknown } | undefined;
  #wakeReader: (() => void) | undefined;
  #wakeWriter: (() => void) | undefined;

  /** How many items wait to be taken. */
  get size(): number {
    return this.#items.length;
  }

  /** Whether {@link Inbox.end} was called. */
  get ended(): boolean {
    return this.#end !== undefined;
  }

  /** Adds an item, and wakes a read that waits. */
  push(item: M): void {
    this.#items.push(item);
    this.#wakeReader = wake(this.#wakeReader);
  }

  /** Ends the inbox (the first reason is kept): reads take what is left, then reject with `reason`. */
  end(reason: unknown): void {
    this.#end ??= { reason };
    this.#wakeReader = wake(this.#wakeReader);
    this.#wakeWriter = wake(this.#wakeWriter);
  }

  /** Takes every item, once there is one; rejects once the inbox ended and is empty. */
  async take(): Promise<M[]> {
    while (this.#items.length === 0 && !this.#end)
      await new Promise<void>((resolve) => (this.#wakeReader = resolve));
    if (this.#items.length === 0) throw (this.#end as { reason: unknown }).reason;
    this.#wakeWriter = wake(this.#wakeWriter);
    return this.#items.splice(0);
  }

  /** Resolves at the next {@link Inbox.take} or {@link Inbox.end}: for a writer that waits for room. */
  taken(): Promise<void> {
    if (this.#end) return Promise.resolve();
    return new Promise((resolve) => (this.#wakeWriter = resolve));
  }
}

/** Calls a waiter, if any; returns `undefined`, for the field that held it. */
function wake(waiter: (() => void) | undefined): undefined {
  waiter?.();
  return undefined;
}
