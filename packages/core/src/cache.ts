import { XError } from "./x-error.js";

/** A value, or a promise of it: caches may be synchronous or asynchronous. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * A key-value cache with string keys. Every method may answer synchronously or with a promise, so a
 * `Map`-like in-memory store and a network store fit the same interface. `get` of a missing key is
 * `undefined`, never an error.
 */
export interface Cache<V = unknown> {
  /** The stored value, or `undefined` when the key is missing. */
  get(key: string): MaybePromise<V | undefined>;
  /** Stores `value` under `key`, replacing any previous value. */
  set(key: string, value: V): MaybePromise<unknown>;
  /** Whether the key holds a value. */
  has(key: string): MaybePromise<boolean>;
  /** Removes the key; no error when it is missing. */
  delete(key: string): MaybePromise<unknown>;
}

/** A {@link Cache} whose methods all answer synchronously. */
export interface SyncCache<V = unknown> extends Cache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  has(key: string): boolean;
  delete(key: string): boolean;
}

/**
 * An in-memory synchronous {@link Cache}. It stores a structured clone on `set` and returns a fresh
 * structured clone from every `get`, so neither the caller's object nor a returned one can change what is
 * stored. Values round-trip `Date`, `bigint`, `Map`, `Set`, typed arrays and nested plain objects.
 *
 * A value that cannot be cloned (a function, a symbol, an object holding one) makes `set` throw an
 * `XError` `ERR_X_CACHE_VALUE` and stores nothing; subclasses may throw their own error through
 * {@link MemoryCache.invalidValue}.
 */
export class MemoryCache<V = unknown> implements SyncCache<V> {
  readonly #entries = new Map<string, V>();

  /** Number of stored keys. */
  get size(): number {
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    return value === undefined ? undefined : structuredClone(value);
  }

  set(key: string, value: V): void {
    let copy: V;
    try {
      copy = structuredClone(value);
    } catch (cause) {
      throw this.invalidValue(key, cause);
    }
    this.#entries.set(key, copy);
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  delete(key: string): boolean {
    return this.#entries.delete(key);
  }

  /** Removes every key. */
  clear(): void {
    this.#entries.clear();
  }

  /**
   * The error `set` throws for a value that cannot be stored. Override to throw a package's own code.
   *
   * @param key - the key being set
   * @param cause - the `DataCloneError` from `structuredClone`
   */
  protected invalidValue(key: string, cause: unknown): Error {
    return new XError(
      "ERR_X_CACHE_VALUE",
      `cannot store the value of key ${JSON.stringify(key)}: it cannot be cloned`,
      {
        cause,
      },
    );
  }
}
