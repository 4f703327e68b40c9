import { hash } from "node:crypto";
import type Database from "better-sqlite3";

/** See {@link originalStatements}. */
export interface OriginalStatements {
  /** The original's dequeue in one transaction: the attr path and payload handed out, or `undefined`. */
  dequeue: Database.Transaction<(now: number) => { attrPath: string; payload: string } | undefined>;
  /** The original's finish. */
  finish: (attrPath: string, now: number, exitCode: number) => void;
  /** The original's upsert of a fetcher run, in one transaction. */
  upsertFetcherRun: (fetcher: string, runStarted: number, isComplete: boolean) => void;
  /**
   * The original's enqueue in one transaction: one insert per line (as its `executemany`), each looking its
   * fetcher up by name, with the jitter from an MD5 digest by `node:crypto` (the original's `hashlib`).
   */
  enqueue: (fetcher: string, runStarted: number, entries: ReadonlyArray<readonly [string, string]>) => void;
}

/**
 * The original supervisor's dequeue and finish, its own SQL statements issued by hand on `db` (as its
 * `Storage.dequeue` and `Storage.finish` run them): what the original, or a tool of its, does to a database.
 */
export function originalStatements(db: Database.Database): OriginalStatements {
  const select = db.prepare(
    `SELECT fetcher_id, attr_path, payload, max(fetcher_run_started) FROM queue LEFT JOIN log USING (attr_path)
     GROUP BY last_started, order_jitter, attr_path, fetcher_id
     HAVING is_dequeued = 0 AND (started IS NULL OR finished IS NOT NULL OR started + 43200 < ?)
     ORDER BY last_started ASC, order_jitter, attr_path, fetcher_id LIMIT 1`,
  );
  const mark = db.prepare("UPDATE queue SET is_dequeued = 1 WHERE fetcher_id = ? AND attr_path = ?");
  const log = db.prepare(
    `INSERT INTO log (attr_path, started) VALUES (?, ?)
     ON CONFLICT DO UPDATE SET started = excluded.started, finished = NULL, exit_code = NULL`,
  );
  const finish = db.prepare("UPDATE log SET finished = ?, exit_code = ? WHERE attr_path = ?");
  const addFetcher = db.prepare("INSERT OR IGNORE INTO fetchers (name) VALUES (?)");
  const upsertRun = db.prepare(
    `INSERT INTO fetcher_runs (fetcher_id, run_started, is_complete)
     VALUES ((SELECT fetcher_id FROM fetchers WHERE name = ?), ?, ?)
     ON CONFLICT DO UPDATE SET is_complete = excluded.is_complete`,
  );
  const insert = db.prepare(
    `INSERT INTO queue (fetcher_id, fetcher_run_started, attr_path, payload, order_jitter)
     SELECT fetcher_id, ?, ?, ?, ? FROM fetchers WHERE name = ?
     ON CONFLICT DO UPDATE SET payload = excluded.payload`,
  );
  return {
    upsertFetcherRun: db.transaction((fetcher: string, runStarted: number, isComplete: boolean) => {
      addFetcher.run(fetcher);
      upsertRun.run(fetcher, runStarted, isComplete ? 1 : 0);
    }),
    enqueue: db.transaction(
      (fetcher: string, runStarted: number, entries: ReadonlyArray<readonly [string, string]>) => {
        for (const [attrPath, payload] of entries) {
          insert.run(runStarted, attrPath, payload, hash("md5", attrPath, "buffer").readInt32LE(0), fetcher);
        }
      },
    ),
    dequeue: db.transaction((now: number) => {
      const row = select.get(now) as { fetcher_id: number; attr_path: string; payload: string } | undefined;
      if (!row) return undefined;
      mark.run(row.fetcher_id, row.attr_path);
      log.run(row.attr_path, now);
      return { attrPath: row.attr_path, payload: row.payload };
    }),
    finish: (attrPath, now, exitCode) => {
      finish.run(now, exitCode, attrPath);
    },
  };
}
