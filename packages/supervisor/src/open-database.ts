import type Database from "better-sqlite3";
import { ErrorCode, SupervisorError } from "./errors.js";
import { requireAtUse } from "./require-at-use.js";

/**
 * Opens a SQLite file with better-sqlite3, whose own errors ("unable to open database file") do not say which
 * file.
 *
 * @param file - the file to open
 * @param options - better-sqlite3's options
 * @param database - the database the file belongs to, named in the error (default `file`)
 * @throws SupervisorError `ERR_X_SUPERVISOR_DATABASE` naming `database` when the file cannot be opened
 */
export function openDatabase(file: string, options?: Database.Options, database = file): Database.Database {
  // Loaded at first open, not at import: the native driver costs milliseconds to load (issue #31).
  const Driver = requireAtUse("better-sqlite3") as typeof Database;
  try {
    return new Driver(file, options);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new SupervisorError(ErrorCode.DATABASE, `cannot open the database ${database}: ${reason}`, {
      cause,
    });
  }
}
