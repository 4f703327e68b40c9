import { requireOptionalPeer } from "@x/core/internal";
import type BetterSqlite3 from "better-sqlite3";
import type pg from "pg";
import { ErrorCode, RmqStorageError } from "./errors.js";

const errors = {
  ErrorClass: RmqStorageError,
  missingCode: ErrorCode.DRIVER_UNAVAILABLE,
  versionCode: ErrorCode.DRIVER_VERSION,
};

/**
 * `better-sqlite3`, an optional peer dependency, loaded when the first SQLite storage opens.
 *
 * @throws `ERR_X_RMQ_STORAGE_DRIVER_UNAVAILABLE` when it is not installed, `ERR_X_RMQ_STORAGE_DRIVER_VERSION`
 * when its version is not supported
 */
export function loadSqliteDriver(): typeof BetterSqlite3 {
  return requireOptionalPeer(
    import.meta.url,
    {
      name: "better-sqlite3",
      majors: [12, 13],
      neededFor: "the SQLite storage",
      requiredBy: "@x/rmq-storage",
    },
    errors,
  );
}

/**
 * `pg`, an optional peer dependency, loaded when the first PostgreSQL storage opens.
 *
 * @throws `ERR_X_RMQ_STORAGE_DRIVER_UNAVAILABLE` when it is not installed, `ERR_X_RMQ_STORAGE_DRIVER_VERSION`
 * when its version is not supported
 */
export function loadPostgresDriver(): typeof pg {
  return requireOptionalPeer(
    import.meta.url,
    { name: "pg", majors: [8], neededFor: "the PostgreSQL storage", requiredBy: "@x/rmq-storage" },
    errors,
  );
}
