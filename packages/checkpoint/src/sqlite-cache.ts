import type { SyncCache } from "@x/core";
import { optionError } from "@x/core/internal";
import type { Database, Statement } from "better-sqlite3";
import { CheckpointError, ErrorCode } from "./errors.js";
import { loadSqlite } from "./load-sqlite.js";
import { corruptValue, deserializeValue, serializeValue } from "./stored-value.js";

interface Statements {
  get: Statement<[string], Buffer | unknown>;
  set: Statement<[string, Buffer]>;
  has: Statement<[string], number>;
  delete: Statement<[string]>;
}

/**
 * A synchronous `@x/core` `Cache` in a SQLite file, for checkpoints that survive restarts. Each value is
 * stored as the `node:v8` serialisation of the value (so `Date`, `bigint`, `Map`, `Set` and typed arrays
 * round-trip) in a table `cache(key TEXT PRIMARY KEY, value BLOB NOT NULL)`. A file database runs with
 * `journal_mode = WAL`; every database with `synchronous = NORMAL` and `busy_timeout = 5000`.
 *
 * Needs the optional peer dependency `better-sqlite3`, loaded when the first `SqliteCache` is constructed.
 *
 * @example
 * ```ts
 * await using cache = new SqliteCache("checkpoints.db");
 * const cp = new Checkpoint("enrich", { dependencies: [prices], cache });
 * ```
 */
export class SqliteCache implements SyncCache {
  /** The path given to the constructor. */
  readonly path: string;
  #db: Database | undefined;
  readonly #statements: Statements;

  /**
   * Opens or creates the database.
   *
   * @param path - a file path, or `":memory:"` for a private in-memory database
   * @throws `ERR_X_CHECKPOINT_INVALID_OPTION` for a path that is not a string, or empty or blank;
   *   `ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE` without `better-sqlite3`; `ERR_X_CHECKPOINT_CACHE_OPEN`
   *   (the driver's error as `cause`) for a path that cannot be opened as a database
   */
  constructor(path: string) {
    if (typeof path !== "string" || path.trim() === "") {
      const expected = 'a file path or ":memory:"';
      throw optionError(ErrorCode.INVALID_OPTION, "path", path, expected, CheckpointError);
    }
    const Database = loadSqlite();
    this.path = path;
    let db: Database | undefined;
    try {
      db = new Database(path);
      if (path !== ":memory:") db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("busy_timeout = 5000");
      db.exec("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value BLOB NOT NULL)");
      this.#statements = {
        get: db.prepare<[string], Buffer>("SELECT value FROM cache WHERE key = ?").pluck(),
        set: db.prepare<[string, Buffer]>(
          "INSERT INTO cache (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        ),
        has: db.prepare<[string], number>("SELECT 1 FROM cache WHERE key = ?").pluck(),
        delete: db.prepare<[string]>("DELETE FROM cache WHERE key = ?"),
      };
    } catch (cause) {
      db?.close();
      throw new CheckpointError(
        ErrorCode.CACHE_OPEN,
        `cannot open ${JSON.stringify(path)} as a SQLite cache: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
    }
    this.#db = db;
  }

  /**
   * The value stored under `key`, or `undefined` when it is missing.
   *
   * @throws `ERR_X_CHECKPOINT_CORRUPT` naming the key when the stored bytes cannot be deserialised
   *   (corrupted, or written by something else)
   */
  get(key: string): unknown {
    this.#open();
    const stored = this.#statements.get.get(key);
    if (stored === undefined) return undefined;
    if (!Buffer.isBuffer(stored))
      throw corruptValue(key, new TypeError(`the stored value is a ${typeof stored}, not a blob`));
    return deserializeValue(key, stored);
  }

  /**
   * Stores `value` under `key`, replacing any previous value.
   *
   * @throws `ERR_X_CHECKPOINT_CACHE_VALUE` for a value that cannot be serialised; nothing is stored
   */
  set(key: string, value: unknown): void {
    this.#open();
    this.#statements.set.run(key, serializeValue(key, value));
  }

  /** Whether `key` holds a value (`undefined` and `null` included). */
  has(key: string): boolean {
    this.#open();
    return this.#statements.has.get(key) !== undefined;
  }

  /** Removes `key`; returns whether it was there. No error when it is missing. */
  delete(key: string): boolean {
    this.#open();
    return this.#statements.delete.run(key).changes > 0;
  }

  /** Closes the database. Idempotent; afterwards every other method throws `ERR_X_CHECKPOINT_CACHE_CLOSED`. */
  async close(): Promise<void> {
    const db = this.#db;
    this.#db = undefined;
    db?.close();
  }

  /** Same as {@link SqliteCache.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #open(): void {
    if (!this.#db) {
      throw new CheckpointError(
        ErrorCode.CACHE_CLOSED,
        `the SQLite cache ${JSON.stringify(this.path)} is closed`,
      );
    }
  }
}
