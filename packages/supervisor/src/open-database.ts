import { createFileExclusive } from "@x/core/internal";
import type Database from "better-sqlite3";
import { ErrorCode, SupervisorError } from "./errors.js";
import { requireAtUse } from "./require-at-use.js";

/** Options of {@link openDatabase}: better-sqlite3's, and two of ours. */
export interface OpenDatabaseOptions extends Database.Options {
  /** The database the file belongs to, named in the error. Default: the file. */
  database?: string;
  /**
   * Mode (before the umask) to create a missing file with, before SQLite opens it: SQLite then gives its
   * `-wal`, `-shm` and `-journal` files the same mode. A file already there keeps its own. Default: SQLite
   * creates it (`0644` under the usual umask).
   */
  createMode?: number;
}

/**
 * Opens a SQLite file with better-sqlite3, whose own errors ("unable to open database file") do not say which
 * file.
 *
 * @param file - the file to open (`":memory:"` or `""`: an in-memory database)
 * @param options - see {@link OpenDatabaseOptions}
 * @throws SupervisorError `ERR_X_SUPERVISOR_DATABASE` naming the database when the file cannot be opened
 */
export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Database.Database {
  const { database = file, createMode, ...driverOptions } = options;
  // Loaded at first open, not at import: the native driver costs milliseconds to load (issue #31).
  const Driver = requireAtUse("better-sqlite3") as typeof Database;
  try {
    if (createMode !== undefined && file !== ":memory:" && file !== "") createFileExclusive(file, createMode);
    return new Driver(file, driverOptions);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new SupervisorError(ErrorCode.DATABASE, `cannot open the database ${database}: ${reason}`, {
      cause,
    });
  }
}
