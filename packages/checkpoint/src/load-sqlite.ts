import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import { CheckpointError } from "./errors.js";

/** The `better-sqlite3` constructor. */
export type DatabaseConstructor = typeof BetterSqlite3;

let driver: DatabaseConstructor | undefined;

/**
 * Loads `better-sqlite3`, an optional peer dependency, at the first call only: importing `@x/checkpoint`
 * never loads it, so the package installs and imports without a compiler.
 *
 * @throws `ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE` when it is not installed or its native module fails to load
 */
export function loadSqlite(): DatabaseConstructor {
  if (driver) return driver;
  try {
    driver = createRequire(import.meta.url)("better-sqlite3") as DatabaseConstructor;
  } catch (cause) {
    throw new CheckpointError(
      "ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE",
      "SqliteCache needs the optional peer dependency better-sqlite3, which could not be loaded: install it " +
        `(npm install better-sqlite3) next to @x/checkpoint (${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)})`,
      { cause },
    );
  }
  return driver;
}
