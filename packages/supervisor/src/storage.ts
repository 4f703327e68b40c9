import { closeSync, fdatasync, openSync } from "node:fs";
import { resolve } from "node:path";
import type Database from "better-sqlite3";
import { ErrorCode, SupervisorError } from "./errors.js";
import { jitterHash } from "./jitter-hash.js";
import { recordHolderSql } from "./job-holders.js";
import { openDatabase } from "./open-database.js";
import { latestSchemaVersion, migrations } from "./schema.js";

type Db = Database.Database;
type Statement = Database.Statement;

/** A queued job as handed to a worker. */
export interface Job {
  /** The attribute path: non-empty, no space, CR or LF. */
  attrPath: string;
  /** Everything after the first space of the fetcher line, verbatim. */
  payload: string;
}

/** A fetcher run known to the database. */
export interface FetcherRun {
  /** The fetcher's name (the file name's stem). */
  fetcher: string;
  /** The run number (the file name's middle part), usually unix seconds. */
  runStarted: number;
  /** Whether the whole file has been ingested. */
  isComplete: boolean;
}

/** One worker request in {@link SupervisorStorage.dispatch}. */
export interface DispatchRequest {
  /** The request's time, unix seconds: the finish time of `finished` and the start time of the next job. */
  now: number;
  /** The job the worker reports as done (`DONE`, `QUIT`), if any (`READY` has none). */
  finished?: { attrPath: string; exitCode: number };
  /** Whether the worker asks for a next job; default `true` (`QUIT` asks for none: the worker is leaving). */
  next?: boolean;
  /**
   * Who asks (a TLS client certificate's subject): recorded with the job it is handed, in the table the daemon
   * adds for it (`x_supervisor_job_holders`, which must exist). Absent on the Unix socket.
   */
  holder?: string | undefined;
}

/** How long a dispatched path stays excluded without a `DONE`, in seconds (12 h, as the original). */
export const inFlightSeconds = 43_200;

const dequeueSql = `
  SELECT fetcher_id AS fetcherId, attr_path AS attrPath, payload, max(fetcher_run_started)
  FROM queue LEFT JOIN log USING (attr_path)
  GROUP BY last_started, order_jitter, attr_path, fetcher_id
  HAVING is_dequeued = 0 AND (started IS NULL OR finished IS NOT NULL OR started + ${inFlightSeconds} < ?)
  ORDER BY last_started ASC, order_jitter, attr_path, fetcher_id
  LIMIT 1`;

function checkInteger(name: string, value: unknown): asserts value is number {
  if (!Number.isSafeInteger(value)) {
    throw new SupervisorError(ErrorCode.BAD_ARGUMENT, `${name} must be a safe integer, got ${String(value)}`);
  }
}

/** Rows per insert statement in {@link SupervisorStorage.enqueue}. */
const enqueueChunkRows = 5_000;

const badAttrPath = /[ \r\n]/;
const badPayload = /[\r\n]/;

/**
 * The supervisor's state in SQLite (better-sqlite3, synchronous): fetcher runs, the priority queue and the
 * dispatch log, in the original supervisor's schema. Every write method is one transaction.
 *
 * @example
 * ```ts
 * using storage = SupervisorStorage.open("state.db");
 * storage.upgrade();
 * storage.upsertFetcherRun("f1", 100, true);
 * storage.enqueue("f1", 100, [["hello", "1.0 1.1"]]);
 * storage.dequeue(Math.floor(Date.now() / 1000)); // { attrPath: "hello", payload: "1.0 1.1" }
 * ```
 */
export class SupervisorStorage {
  /** The better-sqlite3 connection; raw SQL is allowed (the triggers keep the queue consistent). */
  readonly db: Db;
  #statements: Map<string, Statement> = new Map();
  /** One better-sqlite3 transaction function, made once (making one costs about 10 µs), running a body. */
  #inTransaction: Database.Transaction<(body: () => unknown) => unknown>;
  /** The WAL file's path when the database is in WAL mode, for {@link syncWal}. */
  #walPath: string | undefined;
  /** A descriptor of the WAL file, opened by the first {@link syncWal}. */
  #walFd: number | undefined;
  /** WAL syncs in flight: the descriptor is closed only once none is. */
  #syncsInFlight = 0;

  private constructor(db: Db, walPath: string | undefined) {
    this.db = db;
    this.#walPath = walPath;
    this.#inTransaction = db.transaction((body: () => unknown) => body());
  }

  /**
   * Opens (creating it if missing) a database: `foreign_keys = ON`, `busy_timeout = 5000`, and for a file
   * `journal_mode = WAL` with `synchronous = FULL` (every commit is on disk before it returns, so a reply sent
   * after it survives a power loss) and a 32 MiB page cache. The schema is not touched: call {@link upgrade}.
   *
   * A file that does not exist is created with `options.mode`, and so are SQLite's `-wal` and `-shm` files
   * beside it (SQLite gives them the database's mode); an existing file keeps its mode.
   *
   * @param path - a file path, or `":memory:"`
   * @param options - `mode`: the mode of a new database file, before the umask. Default `0o600`: its user alone.
   * @throws SupervisorError `ERR_X_SUPERVISOR_DATABASE`, naming the path, when the file cannot be opened
   */
  static open(path: string, options: { mode?: number } = {}): SupervisorStorage {
    const db = openDatabase(path, { createMode: options.mode ?? 0o600 });
    let walPath: string | undefined;
    try {
      db.pragma("foreign_keys = ON");
      db.pragma("busy_timeout = 5000");
      if (path !== ":memory:" && path !== "") {
        if (db.pragma("journal_mode = WAL", { simple: true }) === "wal") walPath = `${resolve(path)}-wal`;
        db.pragma("synchronous = FULL"); // a dispatch forgotten by a power loss would run twice
        db.pragma("cache_size = -32768"); // 32 MiB of page cache: the queue's indexes are written at random places
      }
    } catch (error) {
      db.close();
      throw error;
    }
    return new SupervisorStorage(db, walPath);
  }

  /** The schema version stored in the database (`PRAGMA user_version`); 0 for a fresh file. */
  get schemaVersion(): number {
    return this.db.pragma("user_version", { simple: true }) as number;
  }

  /**
   * Creates or migrates the schema: runs every step after the stored version up to `version`, each in its own
   * transaction. A `version` at or below the stored one changes nothing.
   *
   * @param version - the target version, 1 or 2. Default 2.
   * @throws SupervisorError `ERR_X_SUPERVISOR_SCHEMA` when the database is newer than version 2
   */
  upgrade(version: 1 | 2 = 2): void {
    if (version !== 1 && version !== 2) {
      throw new SupervisorError(
        ErrorCode.BAD_ARGUMENT,
        `schema version must be 1 or 2, got ${String(version)}`,
      );
    }
    const current = this.schemaVersion;
    if (current > latestSchemaVersion) {
      throw new SupervisorError(
        ErrorCode.SCHEMA,
        `database schema version ${current} is newer than this supervisor supports (${latestSchemaVersion})`,
      );
    }
    for (let step = current + 1; step <= version; step++) {
      this.db.transaction(() => {
        this.db.exec(migrations[step - 1]!);
        this.db.pragma(`user_version = ${step}`);
      })();
    }
  }

  /** Every fetcher run, with its fetcher's name, in no particular order. */
  getFetcherRuns(): FetcherRun[] {
    const rows = this.#prepare(
      `SELECT name, run_started AS runStarted, is_complete AS isComplete
       FROM fetchers JOIN fetcher_runs USING (fetcher_id)`,
    ).all() as Array<{ name: string; runStarted: number; isComplete: number }>;
    return rows.map((r) => ({ fetcher: r.name, runStarted: r.runStarted, isComplete: r.isComplete !== 0 }));
  }

  /**
   * Registers a run (creating its fetcher name with the next id if new), or updates only its `is_complete`.
   * An existing name consumes no id, and the run row is never re-created, so its queue rows survive.
   *
   * @param fetcher - the fetcher's name
   * @param runStarted - the run number, a safe integer
   * @param isComplete - whether the run's file is fully ingested
   */
  upsertFetcherRun(fetcher: string, runStarted: number, isComplete: boolean): void {
    checkInteger("runStarted", runStarted);
    this.#transaction(() => {
      const fetcherId = this.#fetcherId(fetcher) ?? this.#createFetcher(fetcher);
      this.#prepare(
        `INSERT INTO fetcher_runs (fetcher_id, run_started, is_complete) VALUES (?, ?, ?)
         ON CONFLICT DO UPDATE SET is_complete = excluded.is_complete`,
      ).run(fetcherId, runStarted, isComplete ? 1 : 0);
    });
  }

  /**
   * Adds a run's lines to the queue, in one transaction. A path already queued for this run only gets the new
   * payload (its dispatch state stays); within `entries`, a later duplicate wins. An unknown fetcher name
   * inserts nothing (as the original).
   *
   * @param fetcher - the fetcher's name
   * @param runStarted - a registered run of that fetcher
   * @param entries - `[attrPath, payload]` pairs
   * @throws SupervisorError `ERR_X_SUPERVISOR_UNKNOWN_RUN` for a known fetcher whose run is not registered;
   *   `ERR_X_SUPERVISOR_BAD_ENTRY` for an attr path that is empty or holds a space, CR or LF, or a payload
   *   with CR or LF. Nothing is inserted then.
   */
  enqueue(fetcher: string, runStarted: number, entries: ReadonlyArray<readonly [string, string]>): void {
    checkInteger("runStarted", runStarted);
    for (const [attrPath, payload] of entries) {
      if (typeof attrPath !== "string" || attrPath === "" || badAttrPath.test(attrPath)) {
        throw new SupervisorError(
          ErrorCode.BAD_ENTRY,
          `attr path ${JSON.stringify(attrPath)} must be non-empty, without space, CR or LF`,
        );
      }
      if (typeof payload !== "string" || badPayload.test(payload)) {
        throw new SupervisorError(
          ErrorCode.BAD_ENTRY,
          `payload of ${attrPath} must be a string without CR or LF`,
        );
      }
    }
    this.#transaction(() => {
      const fetcherId = this.#fetcherId(fetcher);
      if (fetcherId === undefined) return;
      const run = this.#prepare("SELECT 1 FROM fetcher_runs WHERE fetcher_id = ? AND run_started = ?");
      if (run.get(fetcherId, runStarted) === undefined) {
        throw new SupervisorError(
          ErrorCode.UNKNOWN_RUN,
          `run ${runStarted} of fetcher ${JSON.stringify(fetcher)} is not registered (call upsertFetcherRun first)`,
        );
      }
      // One statement per chunk, rows passed as a JSON array: far fewer native calls than a row at a time.
      // json_each yields the rows in order, so a later duplicate still overwrites an earlier one.
      const insert = this.#prepare(
        `INSERT INTO queue (fetcher_id, fetcher_run_started, attr_path, payload, order_jitter)
         SELECT ?, ?, value ->> 0, value ->> 1, value ->> 2 FROM json_each(?) WHERE true
         ON CONFLICT DO UPDATE SET payload = excluded.payload`,
      );
      for (let start = 0; start < entries.length; start += enqueueChunkRows) {
        const rows = entries
          .slice(start, start + enqueueChunkRows)
          .map(([attrPath, payload]) => [attrPath, payload, jitterHash(attrPath)]);
        insert.run(fetcherId, runStarted, JSON.stringify(rows));
      }
    });
  }

  /**
   * Deletes a run; its queue rows go by cascade, its fetcher name too if this was its last run. `log` is kept.
   * An unknown fetcher or run is a no-op.
   */
  deleteFetcherRun(fetcher: string, runStarted: number): void {
    this.deleteFetcherRuns([{ fetcher, runStarted }]);
  }

  /** {@link deleteFetcherRun} for each run, in one transaction. */
  deleteFetcherRuns(runs: Iterable<{ fetcher: string; runStarted: number }>): void {
    const list = [...runs];
    for (const { runStarted } of list) checkInteger("runStarted", runStarted);
    this.#transaction(() => {
      const remove = this.#prepare(
        `DELETE FROM fetcher_runs
         WHERE fetcher_id = (SELECT fetcher_id FROM fetchers WHERE name = ?) AND run_started = ?`,
      );
      for (const { fetcher, runStarted } of list) remove.run(fetcher, runStarted);
    });
  }

  /**
   * Takes the first eligible job and records it as started at `now`: every row of its (attr path, fetcher)
   * group is marked dequeued and the path's `log` row restarts, which sends the path to the back of the queue.
   *
   * @param now - the start time, unix seconds
   * @returns the job, or `null` when nothing is eligible
   */
  dequeue(now: number): Job | null {
    checkInteger("startTime", now);
    return this.#transaction(() => this.#takeNext(now));
  }

  /**
   * A group commit of worker requests: for each request in order, records its finished job (as
   * {@link finish}) and then, unless it asks for none, takes the next job (as {@link dequeue}), all in one `BEGIN IMMEDIATE`
   * transaction. Cheaper than one {@link dequeue} per request inside a caller's transaction, which would
   * open a savepoint for each.
   *
   * @param requests - the requests, in the order they are served
   * @returns one job, or `null` when nothing is eligible, per request and in the same order
   */
  dispatch(requests: readonly DispatchRequest[]): Array<Job | null> {
    for (const { now, finished } of requests) {
      checkInteger("startTime", now);
      if (finished !== undefined) checkInteger("exitCode", finished.exitCode);
    }
    return this.#transaction(() =>
      requests.map(({ now, finished, next = true, holder }) => {
        if (finished !== undefined) this.#finishRun(finished.attrPath, now, finished.exitCode);
        const job = next ? this.#takeNext(now) : null;
        if (job !== null && holder !== undefined) {
          this.#prepare(recordHolderSql).run(job.attrPath, holder, now);
        }
        return job;
      }),
    );
  }

  /**
   * As {@link dispatch}, but the commit is only written to the WAL, not yet synced to the disk: the jobs are
   * durable once a {@link syncWal} called after this one has resolved, and must not be handed out before.
   * A daemon serving many workers writes one group commit while the previous one's sync is in flight, and
   * so shares each sync among all the commits written meanwhile. Without a WAL (an in-memory database, or a
   * file another program left in another journal mode) it is {@link dispatch}, durable on return.
   */
  dispatchUnsynced(requests: readonly DispatchRequest[]): Array<Job | null> {
    if (this.#walPath === undefined) return this.dispatch(requests);
    const level = this.#prepare("PRAGMA synchronous").pluck().get() as number;
    this.#prepare("PRAGMA synchronous = NORMAL").run(); // in WAL mode: the commit is written, not synced
    try {
      return this.dispatch(requests);
    } finally {
      this.#prepare(`PRAGMA synchronous = ${level}`).run();
    }
  }

  /**
   * Syncs the WAL file to the disk (`fdatasync`, in libuv's thread pool, so the event loop keeps running):
   * once it resolves, every commit written before the call survives a power loss. Resolves at once without
   * a WAL.
   */
  syncWal(): Promise<void> {
    const walPath = this.#walPath;
    if (walPath === undefined || this.closed) return Promise.resolve();
    try {
      this.#walFd ??= openSync(walPath, "r");
    } catch (error) {
      // no WAL file yet: nothing was written to one
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return Promise.resolve();
      return Promise.reject(error);
    }
    const fd = this.#walFd;
    this.#syncsInFlight++;
    return new Promise<void>((resolve, reject) =>
      fdatasync(fd, (error) => {
        if (--this.#syncsInFlight === 0 && this.closed) this.#closeWal();
        if (error) reject(error);
        else resolve();
      }),
    );
  }

  /**
   * Records the end of a path's job. A path with no `log` row is a silent no-op.
   *
   * @param attrPath - the path
   * @param finishTime - unix seconds
   * @param exitCode - the job's exit status, an integer
   */
  finish(attrPath: string, finishTime: number, exitCode: number): void {
    checkInteger("finishTime", finishTime);
    checkInteger("exitCode", exitCode);
    this.#finishRun(attrPath, finishTime, exitCode);
  }

  /** Whether {@link close} has run. */
  get closed(): boolean {
    return !this.db.open;
  }

  /** Closes the database; idempotent. */
  close(): void {
    if (!this.db.open) return;
    this.#statements.clear();
    this.db.close();
    if (this.#syncsInFlight === 0) this.#closeWal();
  }

  #closeWal(): void {
    if (this.#walFd === undefined) return;
    closeSync(this.#walFd);
    this.#walFd = undefined;
  }

  /** Same as {@link close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** The body of {@link dequeue}, run inside a transaction. */
  #takeNext(now: number): Job | null {
    const row = this.#prepare(dequeueSql).get(now) as
      | { fetcherId: number; attrPath: string; payload: string }
      | undefined;
    if (row === undefined) return null;
    this.#prepare("UPDATE queue SET is_dequeued = 1 WHERE fetcher_id = ? AND attr_path = ?").run(
      row.fetcherId,
      row.attrPath,
    );
    this.#prepare(
      `INSERT INTO log (attr_path, started) VALUES (?, ?)
       ON CONFLICT DO UPDATE SET started = excluded.started, finished = NULL, exit_code = NULL`,
    ).run(row.attrPath, now);
    return { attrPath: row.attrPath, payload: row.payload };
  }

  /** The body of {@link finish}. */
  #finishRun(attrPath: string, finishTime: number, exitCode: number): void {
    this.#prepare("UPDATE log SET finished = ?, exit_code = ? WHERE attr_path = ?").run(
      finishTime,
      exitCode,
      attrPath,
    );
  }

  #fetcherId(name: string): number | undefined {
    const row = this.#prepare("SELECT fetcher_id FROM fetchers WHERE name = ?").get(name) as
      | { fetcher_id: number }
      | undefined;
    return row?.fetcher_id;
  }

  #createFetcher(name: string): number {
    return Number(this.#prepare("INSERT INTO fetchers (name) VALUES (?)").run(name).lastInsertRowid);
  }

  /** Runs `body` in a `BEGIN IMMEDIATE` transaction (a savepoint when one is already open). */
  #transaction<T>(body: () => T): T {
    return this.#inTransaction.immediate(body) as T;
  }

  #prepare(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}
