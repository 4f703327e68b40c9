import type Database from "better-sqlite3";
import { ErrorCode, SupervisorError } from "./errors.js";
import { openDatabase } from "./open-database.js";

/**
 * The lock that keeps a second daemon off a database: an exclusive SQLite lock held on the empty file
 * `<db>-lock` for as long as the daemon runs. It is an fcntl lock, which the kernel releases when the
 * process ends, however it ends (SIGKILL, a crash, a power loss): the file stays, and never blocks the next
 * start. Readers of the database (`x-supervisor status`, `queue-html`, `sqlite3`) never look at it.
 *
 * The lock belongs to the file, not to the name it was given: `<db>` is the database's real path (symbolic
 * links and `..` resolved; see {@link DatabaseLock.path}), and a database file with more than one name (a hard
 * link) is refused, since a daemon started under its other name would take another lock (and SQLite would
 * keep another `-wal` file).
 */
export class DatabaseLock {
  readonly #connection: Database.Database;

  private constructor(connection: Database.Database) {
    this.#connection = connection;
  }

  /**
   * Takes the lock of database `db`, at once or not at all.
   *
   * @param db - the database path (an in-memory database, `:memory:` or `""`, is nobody else's: no lock)
   * @param mode - the mode (before the umask) of the lock file when it is created. Default `0o600`.
   * @returns the lock, or `undefined` for an in-memory database
   * @throws SupervisorError `ERR_X_SUPERVISOR_DATABASE_IN_USE` when another daemon (or another `Supervisor`
   *   of this process) holds it, `ERR_X_SUPERVISOR_DATABASE` when the lock file cannot be opened
   */
  static acquire(db: string, mode = 0o600): DatabaseLock | undefined {
    const path = DatabaseLock.path(db);
    if (path === undefined) return undefined;
    const connection = openDatabase(path, { timeout: 0, database: db, createMode: mode });
    try {
      connection.pragma("journal_mode = MEMORY"); // no -journal file beside it
      connection.exec("BEGIN EXCLUSIVE"); // held, without a write, until the connection closes
    } catch (error) {
      connection.close();
      if ((error as { code?: string }).code !== "SQLITE_BUSY") throw error;
      throw new SupervisorError(
        ErrorCode.DATABASE_IN_USE,
        `another daemon is using the database ${db} (it holds the lock on ${path})`,
        { cause: error },
      );
    }
    const links = linkCount(db);
    if (links > 1) {
      connection.close();
      throw new SupervisorError(
        ErrorCode.DATABASE_IN_USE,
        `the database ${db} has ${links} names (hard links): another daemon may be using it under another ` +
          "name, which takes another lock; give the database one name (remove the other links)",
      );
    }
    return new DatabaseLock(connection);
  }

  /**
   * The lock file of database `db`: `<real path>-lock`, the real path having its symbolic links and `..`
   * resolved (the file's, or its directory's while the file does not exist yet), so that every name of the
   * database but a hard link leads to the same lock.
   *
   * @param db - the database path
   * @returns the path, or `undefined` for an in-memory database (`:memory:` or `""`)
   */
  static path(db: string): string | undefined {
    if (db === ":memory:" || db === "") return undefined;
    return `${realPath(db)}-lock`;
  }

  /** Releases the lock; idempotent. */
  release(): void {
    if (this.#connection.open) this.#connection.close();
  }
}

/** `file` with its symbolic links and `..` resolved; when it does not exist, its directory's, or as given. */
function realPath(file: string): string {
  const { realpathSync } = process.getBuiltinModule("node:fs");
  const { basename, dirname, join, resolve } = process.getBuiltinModule("node:path");
  for (const real of [() => realpathSync(file), () => join(realpathSync(dirname(file)), basename(file))]) {
    try {
      return real();
    } catch {
      // try the next
    }
  }
  return resolve(file);
}

/** How many names (hard links) `file` has; 1 when it does not exist yet. */
function linkCount(file: string): number {
  try {
    return process.getBuiltinModule("node:fs").statSync(file).nlink;
  } catch {
    return 1;
  }
}
