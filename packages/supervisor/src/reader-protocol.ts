/**
 * The messages between the read thread (reader-thread.ts) and its owner, `QueueReader` (queue-reader.ts).
 */

/** The read thread's `workerData`. */
export interface ReaderData {
  /** The resolved path of the `better-sqlite3` module the thread loads (the daemon's own). */
  driver: string;
  /** The database file, opened read-only by the thread. */
  path: string;
}

/** One SQL statement and its parameters; its rows come back as objects. */
export interface ReadStatement {
  sql: string;
  params: readonly unknown[];
}

/** What the owner asks: run these statements in one read transaction (one snapshot). */
export interface ReaderRequest {
  id: number;
  statements: readonly ReadStatement[];
}

/** The rows of each statement, in order, or the error. */
export type ReaderReply = { id: number; rows: unknown[][] } | { id: number; error: string };
