import type Database from "better-sqlite3";

/**
 * The one table this package adds to the original supervisor's schema: which TLS client certificate was
 * handed each path's last job. The original's code and tools never read it, and its schema version
 * (`PRAGMA user_version`) is not touched, so the database stays a drop-in. `upgrade()` does not create it; the
 * daemon does, when it serves TLS. A row counts only while its `started` equals the path's `log.started`: a
 * later dispatch over the Unix socket (or by the original) makes it stale without a write.
 */
export const jobHoldersTable = "x_supervisor_job_holders";

const createSql = `CREATE TABLE IF NOT EXISTS ${jobHoldersTable} (
  attr_path TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  started INTEGER NOT NULL
) STRICT, WITHOUT ROWID`;

/** Records who was handed a path's job started at `started`; runs inside the dispatch transaction. */
export const recordHolderSql = `INSERT INTO ${jobHoldersTable} (attr_path, holder, started) VALUES (?, ?, ?)
  ON CONFLICT DO UPDATE SET holder = excluded.holder, started = excluded.started`;

/** Creates the table if it is missing (one small write; the schema version stays as it is). */
export function createJobHoldersTable(db: Database.Database): void {
  db.exec(createSql);
}

/** Whether the database has the table (a database never served over TLS has not). */
export function hasJobHoldersTable(db: Database.Database): boolean {
  return (
    db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(jobHoldersTable) !==
    undefined
  );
}
