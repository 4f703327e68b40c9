import { requireOptionalPeer } from "@x/core/internal";
import type BetterSqlite3 from "better-sqlite3";
import { CheckpointError, ErrorCode } from "./errors.js";

/** The `better-sqlite3` constructor. */
export type DatabaseConstructor = typeof BetterSqlite3;

let driver: DatabaseConstructor | undefined;

/**
 * Loads `better-sqlite3`, an optional peer dependency, at the first call only: importing `@x/checkpoint`
 * never loads it, so the package installs and imports without it.
 *
 * @throws `ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE` when it is not installed or its native module fails to load
 * @throws `ERR_X_CHECKPOINT_SQLITE_VERSION` when the installed major is not 12 or 13, or the installed
 * version does not support this Node
 */
export function loadSqlite(): DatabaseConstructor {
  driver ??= requireOptionalPeer<DatabaseConstructor>(
    import.meta.url,
    { name: "better-sqlite3", majors: [12, 13], neededFor: "SqliteCache", requiredBy: "@x/checkpoint" },
    {
      ErrorClass: CheckpointError,
      missingCode: ErrorCode.SQLITE_UNAVAILABLE,
      versionCode: ErrorCode.SQLITE_VERSION,
    },
  );
  return driver;
}
