import type Database from "better-sqlite3";
import { ErrorCode, SupervisorError } from "./errors.js";
import { hasJobHoldersTable, jobHoldersTable } from "./job-holders.js";
import { openDatabase } from "./open-database.js";
import { latestSchemaVersion } from "./schema.js";
import { inFlightSeconds } from "./storage.js";

/** One fetcher run in a {@link QueueStatus}. */
export interface FetcherRunStatus {
  fetcher: string;
  /**
   * The run number from the fetcher file's name, as written there: an identifier (by convention the unix
   * seconds the run started at), so it is not converted to milliseconds.
   */
  runStarted: number;
  isComplete: boolean;
  /** Queue rows of the run. */
  rows: number;
  /** Rows not dispatched yet (`is_dequeued = 0`). */
  pending: number;
}

/** A job handed out and not reported done (in flight, or stale after 12 h), in a {@link QueueStatus}. */
export interface UnfinishedJob {
  attrPath: string;
  /** When it was handed out, epoch milliseconds (whole seconds, as the database stores them). */
  started: number;
  /** Started more than 12 h ago: presumed lost, eligible again. */
  stale: boolean;
  /**
   * The subject of the TLS client certificate of the worker it was handed to; `null` when it went out on the
   * Unix socket (or before the daemon served TLS).
   */
  holder: string | null;
}

/** A snapshot of a supervisor database, as `x-supervisor status --json` prints it. */
export interface QueueStatus {
  schemaVersion: number;
  /** The time the figures were taken at, epoch milliseconds (as `Date.now()` gives it). */
  now: number;
  /** Queue rows. */
  rows: number;
  /** (attr path, fetcher) groups whose newest row is not dispatched. */
  waiting: number;
  /** Waiting groups not held back by an in-flight job of their path: what `READY` could hand out now. */
  eligible: number;
  /** Jobs started less than 12 h ago and not finished. */
  inFlight: number;
  /** Jobs started more than 12 h ago and never finished: presumed lost. */
  stale: number;
  /** Finished jobs (the last one of each path). */
  finished: number;
  /** Finished jobs with a non-zero exit code. */
  failed: number;
  /** Every job handed out and not reported done, oldest first, with the worker certificate that holds it. */
  unfinishedJobs: UnfinishedJob[];
  /**
   * The first waiting group in dispatch order; `lastStarted` is when its path's last job started, epoch
   * milliseconds (whole seconds), or `null` if it never ran.
   */
  oldestWaiting: { attrPath: string; fetcher: string; lastStarted: number | null } | null;
  fetcherRuns: FetcherRunStatus[];
}

const waitingGroups = `
  SELECT fetcher_id, attr_path, last_started, order_jitter, is_dequeued, max(fetcher_run_started)
  FROM queue GROUP BY attr_path, fetcher_id`;

/**
 * Opens a supervisor database read-only (never created, migrated or written), with a 5 s busy timeout.
 *
 * @throws SupervisorError `ERR_X_SUPERVISOR_SCHEMA` when the schema version is not 2,
 *   `ERR_X_SUPERVISOR_DATABASE` (naming the path) when the file is missing or cannot be opened
 */
export function openReadOnly(path: string): Database.Database {
  const db = openDatabase(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    const schemaVersion = db.pragma("user_version", { simple: true }) as number;
    if (schemaVersion !== latestSchemaVersion) {
      throw new SupervisorError(
        ErrorCode.SCHEMA,
        `database schema version is ${schemaVersion}, expected ${latestSchemaVersion}`,
      );
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Reads the queue's figures from a supervisor database, read-only: the file is never created, migrated or
 * written, and a running daemon is not disturbed (WAL readers never block the writer).
 *
 * @param path - the database file
 * @param now - the reference time, epoch milliseconds. Default: `Date.now()`.
 * @throws SupervisorError `ERR_X_SUPERVISOR_SCHEMA` when the schema version is not 2,
 *   `ERR_X_SUPERVISOR_DATABASE` (naming the path) when the file is missing or cannot be opened
 */
export function readQueueStatus(path: string, now = Date.now()): QueueStatus {
  const db = openReadOnly(path);
  try {
    const schemaVersion = latestSchemaVersion;
    return db.transaction(() => {
      const count = (sql: string, ...params: unknown[]) =>
        (db.prepare(sql).get(...params) as { n: number }).n;
      const limit = Math.floor(now / 1000) - inFlightSeconds;
      const oldest = db
        .prepare(
          `SELECT w.attr_path AS attrPath, name AS fetcher, w.last_started * 1000 AS lastStarted
           FROM (${waitingGroups}) AS w JOIN fetchers USING (fetcher_id)
           WHERE w.is_dequeued = 0
           ORDER BY w.last_started ASC, w.order_jitter, w.attr_path, w.fetcher_id LIMIT 1`,
        )
        .get() as QueueStatus["oldestWaiting"] | undefined;
      const runs = db
        .prepare(
          `SELECT name AS fetcher, run_started AS runStarted, is_complete AS isComplete,
             (SELECT count(*) FROM queue q WHERE q.fetcher_id = r.fetcher_id AND q.fetcher_run_started = r.run_started) AS rows,
             (SELECT count(*) FROM queue q WHERE q.fetcher_id = r.fetcher_id AND q.fetcher_run_started = r.run_started
                AND q.is_dequeued = 0) AS pending
           FROM fetcher_runs r JOIN fetchers USING (fetcher_id)
           ORDER BY name, run_started`,
        )
        .all() as Array<Omit<FetcherRunStatus, "isComplete"> & { isComplete: number }>;
      return {
        schemaVersion,
        now,
        rows: count("SELECT count(*) AS n FROM queue"),
        waiting: count(`SELECT count(*) AS n FROM (${waitingGroups}) WHERE is_dequeued = 0`),
        eligible: count(
          `SELECT count(*) AS n FROM (${waitingGroups}) AS w LEFT JOIN log USING (attr_path)
           WHERE w.is_dequeued = 0 AND (started IS NULL OR finished IS NOT NULL OR started < ?)`,
          limit,
        ),
        inFlight: count("SELECT count(*) AS n FROM log WHERE finished IS NULL AND started >= ?", limit),
        stale: count("SELECT count(*) AS n FROM log WHERE finished IS NULL AND started < ?", limit),
        finished: count("SELECT count(*) AS n FROM log WHERE finished IS NOT NULL"),
        failed: count("SELECT count(*) AS n FROM log WHERE finished IS NOT NULL AND exit_code <> 0"),
        unfinishedJobs: unfinishedJobs(db, limit),
        oldestWaiting: oldest ?? null,
        fetcherRuns: runs.map((r) => ({ ...r, isComplete: r.isComplete !== 0 })),
      };
    })();
  } finally {
    db.close();
  }
}

/**
 * The `log` rows without `finished`, with the holder recorded for that very dispatch (same `started`).
 *
 * @param staleBefore - unix seconds: a job started before it is stale
 */
function unfinishedJobs(db: Database.Database, staleBefore: number): UnfinishedJob[] {
  const holder = hasJobHoldersTable(db)
    ? `(SELECT holder FROM ${jobHoldersTable} h WHERE h.attr_path = log.attr_path AND h.started = log.started)`
    : "NULL";
  const rows = db
    .prepare(
      `SELECT attr_path AS attrPath, log.started * 1000 AS started, log.started < ? AS stale, ${holder} AS holder
       FROM log WHERE finished IS NULL ORDER BY log.started, attr_path`,
    )
    .all(staleBefore) as Array<Omit<UnfinishedJob, "stale"> & { stale: number }>;
  return rows.map((row) => ({ ...row, stale: row.stale !== 0 }));
}
