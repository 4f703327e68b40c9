/** A map that keeps at most `capacity` entries, dropping the least recently used one first. */
export class Lru<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #capacity: number;

  /** @param capacity - the most entries kept, an integer ≥ 1 */
  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The entry for `key`, which becomes the most recently used, or `undefined`. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** Stores `value` as the most recently used entry, dropping the oldest one beyond the capacity. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  /** Number of entries. */
  get size(): number {
    return this.#entries.size;
  }
}
