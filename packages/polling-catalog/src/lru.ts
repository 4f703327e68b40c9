/** Bounds of an {@link Lru}. */
export interface LruBounds<V> {
  /** The most entries kept, an integer ≥ 1. */
  maxEntries: number;
  /** The most total weight kept (e.g. bytes), ≥ 0. Default `Infinity`. */
  maxWeight?: number;
  /** The weight of one value, ≥ 0. Default 0 (only `maxEntries` bounds the map). */
  weigh?: (value: V) => number;
}

/**
 * A map bounded by a number of entries and a total weight, dropping the least recently used entries first.
 * A value heavier than the whole weight bound is not stored.
 */
export class Lru<K, V> {
  readonly #entries = new Map<K, { value: V; weight: number }>();
  readonly #maxEntries: number;
  readonly #maxWeight: number;
  readonly #weigh: (value: V) => number;
  #weight = 0;

  /** @param bounds - see {@link LruBounds} */
  constructor(bounds: LruBounds<V>) {
    this.#maxEntries = bounds.maxEntries;
    this.#maxWeight = bounds.maxWeight ?? Number.POSITIVE_INFINITY;
    this.#weigh = bounds.weigh ?? (() => 0);
  }

  /** The entry for `key`, which becomes the most recently used, or `undefined`. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /**
   * Stores `value` as the most recently used entry, then drops the oldest entries until both bounds hold. A
   * value heavier than the weight bound is not stored, and removes the key's previous entry.
   *
   * @returns whether the value was stored
   */
  set(key: K, value: V): boolean {
    this.delete(key);
    const weight = this.#weigh(value);
    if (weight > this.#maxWeight) return false;
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#weight <= this.#maxWeight) break;
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
    }
    return true;
  }

  /** Removes the entry for `key`, if any. */
  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
  }

  /** Number of entries. */
  get size(): number {
    return this.#entries.size;
  }

  /** Total weight of the entries. */
  get weight(): number {
    return this.#weight;
  }
}
