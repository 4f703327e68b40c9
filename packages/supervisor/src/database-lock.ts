import type Database from "better-sqlite3";
import { ErrorCode, SupervisorError } from "./errors.js";
import { openDatabase } from "./open-database.js";

/**
 * The lock that keeps a second daemon off a database: an exclusive SQLite lock held on the empty file
 * `<db>-lock` for as long as the daemon runs. It is an fcntl lock, which the kernel releases when the
 * process ends, however it ends (SIGKILL, a crash, a power loss): the file stays, and never blocks the next
 * start. Readers of the database (`x-supervisor status`, `queue-html`, `sqlite3`) never look at it.
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
    if (db === ":memory:" || db === "") return undefined;
    const path = `${db}-lock`;
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
    return new DatabaseLock(connection);
  }

  /** Releases the lock; idempotent. */
  release(): void {
    if (this.#connection.open) this.#connection.close();
  }
}
