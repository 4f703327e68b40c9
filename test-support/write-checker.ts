/**
 * A Jepsen-style check of a write path: record every item a writer sent and every item it saw confirmed,
 * then read the storage back and compare. Items are keyed (a key is written with one value, possibly sent
 * several times on retries); the storage is read back as a list of `[key, value]` records, as stored.
 */
export class WriteHistory<V> {
  readonly #sent = new Map<string, V>();
  readonly #confirmed = new Set<string>();
  readonly #same: (a: V, b: V) => boolean;

  /** @param same - whether two values are the same; default `Object.is` (give one for objects) */
  constructor(same: (a: V, b: V) => boolean = Object.is) {
    this.#same = same;
  }

  /**
   * Records that `key` is about to be sent with `value` (call it before sending, so that nothing stored can
   * precede its record). Sending a key again with the same value (a retry) is fine.
   *
   * @throws Error when `key` was sent before with another value: the history could not tell them apart
   */
  sent(key: string, value: V): void {
    const before = this.#sent.get(key);
    if (before !== undefined && !this.#same(before, value))
      throw new Error(`write history: key ${key} sent with two values`);
    this.#sent.set(key, value);
  }

  /**
   * Records that the writer saw these keys confirmed (its write call resolved successfully).
   *
   * @throws Error for a key never {@link sent}
   */
  confirmed(keys: Iterable<string>): void {
    for (const key of keys) {
      if (!this.#sent.has(key)) throw new Error(`write history: key ${key} confirmed but never sent`);
      this.#confirmed.add(key);
    }
  }

  /** Compares the history with what the storage holds. */
  check(stored: Iterable<readonly [string, V]>): WriteCheck {
    const seen = new Map<string, number>();
    const unexpected: string[] = [];
    /** Keys stored with the value that was sent for them. */
    const good = new Set<string>();
    for (const [key, value] of stored) {
      seen.set(key, (seen.get(key) ?? 0) + 1);
      const sent = this.#sent.get(key);
      if (sent !== undefined && this.#same(sent, value)) good.add(key);
      else unexpected.push(key);
    }
    const lost = [...this.#confirmed].filter((key) => !good.has(key));
    const duplicated = [...seen].filter(([, count]) => count > 1).map(([key]) => key);
    const recovered = [...good].filter((key) => !this.#confirmed.has(key));
    const counts = {
      items: this.#sent.size,
      confirmed: this.#confirmed.size,
      stored: [...seen.values()].reduce((sum, count) => sum + count, 0),
    };
    return {
      ...counts,
      lost,
      duplicated,
      unexpected,
      recovered,
      ok: lost.length === 0 && duplicated.length === 0 && unexpected.length === 0,
      summary: () =>
        `lost ${lost.length}, duplicated ${duplicated.length}, unexpected ${unexpected.length} ` +
        `(items ${counts.items}, confirmed ${counts.confirmed}, recovered ${recovered.length}, stored ${counts.stored})`,
    };
  }
}

/** What {@link WriteHistory.check} found. */
export interface WriteCheck {
  /** Keys sent. */
  items: number;
  /** Keys the writer saw confirmed. */
  confirmed: number;
  /** Records the storage holds. */
  stored: number;
  /** Confirmed, yet not stored with the value sent. */
  lost: string[];
  /** Stored more than once (where the storage cannot merge them). */
  duplicated: string[];
  /** Stored, but never sent (or stored with a value never sent for that key). */
  unexpected: string[];
  /** Sent and never confirmed, yet stored: the write went through though the writer could not know. */
  recovered: string[];
  /** No lost, duplicated or unexpected key. */
  ok: boolean;
  /** `lost 0, duplicated 0, unexpected 0 (items N, confirmed C, recovered R, stored S)`. */
  summary(): string;
}
