import type Database from "better-sqlite3";

/**
 * What the SQLite writer thread (sqlite-writer-thread.ts) and its owner (sqlite-writer.ts) share: the writes,
 * how they are applied, and the messages between the two.
 */

/** One statement and the rows of parameters it runs with, in order. */
export type WriteStep = [sql: string, rows: unknown[][]];
/** What one storage write does: its steps commit together or not at all. */
export type Write = WriteStep[];
/** Why a write failed, in a form that crosses threads. */
export interface WriteFailure {
  /** The error's message. */
  message: string;
  /** The error's code, such as `"SQLITE_CONSTRAINT_UNIQUE"`, when it has one. */
  code?: string;
}

/** The writer thread's `workerData`: where and how it connects. */
export interface WriterData {
  /** The resolved path of the `better-sqlite3` module the thread loads. */
  driver: string;
  /** The database file (its schema already created). */
  path: string;
  /** How long a write waits for another connection's lock, in ms. */
  busyTimeoutMs: number;
  /** `PRAGMA` statements for the thread's connection. */
  pragmas: string[];
}

/** A message to the writer thread: the writes of one group commit, or `null` to close and exit. */
export type WriterRequest = Write[] | null;
/** The writer thread's answer to a group: per write, `null` when it committed or why it failed. */
export type WriterResults = Array<WriteFailure | null>;

/** Runs one write's steps on `db` (inside the caller's transaction), preparing each statement once. */
function applyWrite(db: Database.Database, statements: Map<string, Database.Statement>, write: Write): void {
  for (const [sql, rows] of write) {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    for (const row of rows) statement.run(row);
  }
}

/**
 * Group commit: runs every write in one `BEGIN IMMEDIATE` transaction; when that fails, runs each write in
 * its own, so every write still commits or fails as a whole. The writer thread and `InlineWriter` both
 * commit with it.
 *
 * @returns per write, `null` when it committed or why it failed
 */
export function applyWrites(
  db: Database.Database,
  statements: Map<string, Database.Statement>,
  writes: Write[],
): WriterResults {
  try {
    db.transaction(() => {
      for (const write of writes) applyWrite(db, statements, write);
    }).immediate();
    return writes.map(() => null);
  } catch (groupError) {
    if (writes.length === 1) {
      const { message, code } = groupError as { message: string; code?: string };
      return [{ message, code }];
    }
    return writes.map((write) => {
      try {
        db.transaction(() => applyWrite(db, statements, write)).immediate();
        return null;
      } catch (error) {
        const { message, code } = error as { message: string; code?: string };
        return { message, code };
      }
    });
  }
}
