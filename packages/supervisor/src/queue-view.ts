import type Database from "better-sqlite3";
import { hasJobHoldersTable, jobHoldersTable } from "./job-holders.js";
import { readNow, type SqlReader } from "./queue-reader.js";
import type { ReadStatement } from "./reader-protocol.js";
import { inFlightSeconds } from "./storage.js";

/** One waiting entry of a {@link QueueView}, in dispatch order. */
export interface QueueEntry {
  /** 1-based place in dispatch order: the entry `READY` would hand out next is 1. */
  position: number;
  attrPath: string;
  fetcher: string;
  /** The payload of the fetcher's newest run, verbatim (from a fetcher file: escape it before showing it). */
  payload: string;
  /**
   * Since when it waits, epoch milliseconds (whole seconds, as the database stores them): the later of its
   * run number (when the fetcher wrote the line, read as unix seconds) and the end of the path's last job.
   */
  waitingSince: number;
  /** When the path's last job started, epoch milliseconds (whole seconds), or `null` if it never ran. */
  lastStarted: number | null;
  /** Its path has a job in flight (started less than 12 h ago, not done): `READY` skips it until then. */
  held: boolean;
}

/** A job handed out and not reported done, started less than 12 h ago. */
export interface RunningJob {
  attrPath: string;
  /** The TLS client certificate's subject of the worker that holds it; `null` on the Unix socket. */
  holder: string | null;
  /** When it was handed out, epoch milliseconds (whole seconds, as the database stores them). */
  started: number;
  /** `now - started`, in milliseconds. */
  elapsedMs: number;
}

/** A finished job (the last one of its path). */
export interface FinishedJob {
  attrPath: string;
  exitCode: number | null;
  /** When it was handed out, epoch milliseconds (whole seconds, as the database stores them). */
  started: number;
  /** When it was reported done, epoch milliseconds (whole seconds, as the database stores them). */
  finished: number;
  /** `finished - started`, in milliseconds (a multiple of 1 000). */
  durationMs: number;
}

/** One fetcher run. */
export interface FetcherRunView {
  fetcher: string;
  /**
   * The run number from the fetcher file's name, as written there: an identifier (by convention the unix
   * seconds the run started at), so it is not converted to milliseconds.
   */
  runStarted: number;
  isComplete: boolean;
  /** Queue rows of the run: the distinct attr paths of the lines read so far. */
  linesRead: number;
}

/** The cycle time of one fetcher. */
export interface FetcherCycle {
  fetcher: string;
  /** Waiting entries of the fetcher. */
  waiting: number;
  /**
   * How long one pass through the fetcher's queue takes at the current pace, in milliseconds: `now` minus the
   * `lastStarted` of the fetcher's next entry in dispatch order (that path ran once a full pass ago).
   * `null` while the fetcher's first pass is not finished (its next entry never ran).
   */
  cycleMs: number | null;
}

/** What the queue page, `/queue.json` and `queue-html` show. */
export interface QueueView {
  /** The reference time, epoch milliseconds (as `Date.now()` gives it). */
  now: number;
  /** 1-based page of {@link entries}. */
  page: number;
  pageSize: number;
  /** Waiting entries in all. */
  waiting: number;
  /** The page's waiting entries, in dispatch order. */
  entries: QueueEntry[];
  running: RunningJob[];
  /** The latest finishes, newest first. */
  finished: FinishedJob[];
  fetcherRuns: FetcherRunView[];
  cycles: FetcherCycle[];
}

/** Options of {@link readQueueView}. */
export interface QueueViewOptions {
  /** The reference time, epoch milliseconds. Default: `Date.now()`. */
  now?: number;
  /** 1-based page. Default 1. */
  page?: number;
  /** Entries per page, 1 to 1 000. Default 100. */
  pageSize?: number;
  /** Latest finishes shown. Default 20. */
  finishedLimit?: number;
  /** Running jobs shown, at most. Default 200. */
  runningLimit?: number;
}

/** Waiting (attr path, fetcher) groups: `is_dequeued` and `payload` are those of the newest run's row. */
const groups = `
  SELECT fetcher_id, attr_path, payload, last_started, order_jitter, is_dequeued, max(fetcher_run_started) AS run
  FROM queue GROUP BY last_started, order_jitter, attr_path, fetcher_id`;

/**
 * The columns of a {@link QueueEntry} (but `position`) from a waiting group `g` joined with its path's `log`
 * row, times in epoch milliseconds; `held` (0 or 1) takes one parameter, {@link staleBefore}.
 */
const entryColumns = `g.attr_path AS attrPath, name AS fetcher, g.payload, g.last_started * 1000 AS lastStarted,
  max(g.run, coalesce(log.finished, 0)) * 1000 AS waitingSince,
  (log.finished IS NULL AND log.started >= ?) AS held`;

/**
 * Each fetcher's waiting groups, counted through their newest row (the row of the fetcher's newest run, or a
 * row no later run of the same fetcher has the path in): one scan of `queue`, no grouping by path. Its one
 * parameter is `now` in epoch milliseconds.
 */
const cyclesSql = `
  SELECT name AS fetcher, count(*) AS waiting,
    CASE WHEN count(*) = count(q.last_started) THEN ? - min(q.last_started) * 1000 END AS cycleMs
  FROM queue q
  JOIN (SELECT fetcher_id, max(run_started) AS newest FROM fetcher_runs GROUP BY fetcher_id) USING (fetcher_id)
  JOIN fetchers USING (fetcher_id)
  WHERE q.is_dequeued = 0 AND (q.fetcher_run_started = newest OR NOT EXISTS (
    SELECT 1 FROM queue n WHERE n.attr_path = q.attr_path AND n.fetcher_id = q.fetcher_id
      AND n.fetcher_run_started > q.fetcher_run_started))
  GROUP BY q.fetcher_id ORDER BY name`;

/**
 * The statement of {@link FetcherCycle}s at `now`, unix seconds (the metrics' clock, as the daemon's).
 * {@link FetcherCycle.cycleMs} is in milliseconds all the same.
 */
export function cyclesStatement(now: number): ReadStatement {
  return { sql: cyclesSql, params: [now * 1000] };
}

/**
 * Each fetcher's waiting entries and cycle time (see {@link FetcherCycle}), by name.
 *
 * @param db - a connection to a supervisor database at schema version 2
 * @param nowMs - the reference time, epoch milliseconds
 */
export function readFetcherCycles(db: Database.Database, nowMs: number): FetcherCycle[] {
  return readNow(db, [{ sql: cyclesSql, params: [nowMs] }])[0] as FetcherCycle[];
}

/** Unix seconds before which a started job is stale: 12 h before `nowMs`, on the daemon's whole-second clock. */
function staleBefore(nowMs: number): number {
  return Math.floor(nowMs / 1000) - inFlightSeconds;
}

/** The running jobs' count at `now`, unix seconds (started less than 12 h ago, not done). */
export function runningCountStatement(now: number): ReadStatement {
  return {
    sql: "SELECT count(*) AS n FROM log WHERE finished IS NULL AND started >= ?",
    params: [now - inFlightSeconds],
  };
}

/** The options of {@link readQueueView} with their defaults. */
function viewOptions(options: QueueViewOptions) {
  return {
    now: options.now ?? Date.now(),
    pageSize: Math.min(Math.max(Math.trunc(options.pageSize ?? 100), 1), 1_000),
    page: Math.max(Math.trunc(options.page ?? 1), 1),
    finishedLimit: options.finishedLimit ?? 20,
    runningLimit: options.runningLimit ?? 200,
  };
}

/**
 * The statements of a {@link QueueView}, each bounded: the page (`LIMIT`/`OFFSET` along the dispatch-order
 * index), the cycles (one scan), the running and finished jobs (`LIMIT`) and the runs.
 *
 * @param options - see {@link QueueViewOptions}, with defaults applied
 * @param holders - whether the database has the TLS job holders table
 */
function viewStatements(o: ReturnType<typeof viewOptions>, holders: boolean): ReadStatement[] {
  const stale = staleBefore(o.now);
  const holder = holders
    ? `(SELECT holder FROM ${jobHoldersTable} h WHERE h.attr_path = log.attr_path AND h.started = log.started)`
    : "NULL";
  return [
    {
      sql: `SELECT ${entryColumns}
         FROM (${groups} HAVING is_dequeued = 0
               ORDER BY last_started ASC, order_jitter, attr_path, fetcher_id LIMIT ? OFFSET ?) AS g
         JOIN fetchers USING (fetcher_id) LEFT JOIN log USING (attr_path)
         ORDER BY g.last_started ASC, g.order_jitter, g.attr_path, g.fetcher_id`,
      params: [stale, o.pageSize, (o.page - 1) * o.pageSize],
    },
    { sql: cyclesSql, params: [o.now] },
    {
      sql: `SELECT attr_path AS attrPath, ${holder} AS holder, log.started * 1000 AS started,
             ? - log.started * 1000 AS elapsedMs
           FROM log WHERE log.finished IS NULL AND log.started >= ? ORDER BY log.started, attr_path LIMIT ?`,
      params: [o.now, stale, o.runningLimit],
    },
    {
      sql: `SELECT attr_path AS attrPath, exit_code AS exitCode, log.started * 1000 AS started,
             log.finished * 1000 AS finished, (log.finished - log.started) * 1000 AS durationMs
           FROM log WHERE log.finished IS NOT NULL ORDER BY log.finished DESC, attr_path LIMIT ?`,
      params: [o.finishedLimit],
    },
    {
      sql: `SELECT name AS fetcher, run_started AS runStarted, is_complete AS isComplete,
               (SELECT count(*) FROM queue q
                WHERE q.fetcher_run_started = r.run_started AND q.fetcher_id = r.fetcher_id) AS linesRead
             FROM fetcher_runs r JOIN fetchers USING (fetcher_id) ORDER BY name, run_started`,
      params: [],
    },
  ];
}

/** Builds the view from the rows of {@link viewStatements}. */
function assembleView(o: ReturnType<typeof viewOptions>, rows: unknown[][]): QueueView {
  const [entries, cycles, running, finished, runs] = rows as [
    Array<Omit<QueueEntry, "position" | "held"> & { held: number | null }>,
    FetcherCycle[],
    RunningJob[],
    FinishedJob[],
    Array<Omit<FetcherRunView, "isComplete"> & { isComplete: number }>,
  ];
  return {
    now: o.now,
    page: o.page,
    pageSize: o.pageSize,
    waiting: cycles.reduce((sum, c) => sum + c.waiting, 0),
    entries: entries.map((e, i) => ({
      ...e,
      position: (o.page - 1) * o.pageSize + i + 1,
      held: e.held === 1,
    })),
    running,
    finished,
    fetcherRuns: runs.map((r) => ({ ...r, isComplete: r.isComplete !== 0 })),
    cycles,
  };
}

/**
 * Reads one page of the queue and the figures around it, in one read transaction, synchronously. Every query
 * is bounded (a `LIMIT` on every list); the cycles scan the queue once (about 60 ms at 100 000 entries).
 *
 * @param db - a connection to a supervisor database at schema version 2 (the daemon's, or a read-only one)
 * @param options - see {@link QueueViewOptions}
 */
export function readQueueView(db: Database.Database, options: QueueViewOptions = {}): QueueView {
  const o = viewOptions(options);
  return assembleView(o, readNow(db, viewStatements(o, hasJobHoldersTable(db))));
}

/**
 * {@link readQueueView} through a {@link SqlReader} (the daemon's read thread), so the daemon's event loop
 * only renders.
 *
 * @param reader - where the statements run
 * @param holders - whether the database has the TLS job holders table
 */
export async function readQueueViewWith(
  reader: SqlReader,
  holders: boolean,
  options: QueueViewOptions = {},
): Promise<QueueView> {
  const o = viewOptions(options);
  return assembleView(o, await reader.read(viewStatements(o, holders)));
}

/**
 * Every waiting entry in dispatch order, read lazily (one row at a time from an open statement): for a static
 * page of the whole queue. Run it inside a read transaction for a consistent snapshot.
 *
 * @param db - a connection to a supervisor database at schema version 2
 * @param nowMs - the reference time, epoch milliseconds (it decides which entries are held)
 */
export function* iterateQueueEntries(db: Database.Database, nowMs = Date.now()): Generator<QueueEntry> {
  const rows = db
    .prepare(
      `SELECT ${entryColumns}
       FROM (${groups} HAVING is_dequeued = 0) AS g JOIN fetchers USING (fetcher_id) LEFT JOIN log USING (attr_path)
       ORDER BY g.last_started ASC, g.order_jitter, g.attr_path, g.fetcher_id`,
    )
    .iterate(staleBefore(nowMs)) as IterableIterator<
    Omit<QueueEntry, "position" | "held"> & { held: number | null }
  >;
  let position = 0;
  for (const row of rows) yield { ...row, position: ++position, held: row.held === 1 };
}
