import type { Logger } from "@x/core";
import { redactUrl } from "@x/core/internal";
import { ErrorCode, RmqStorageError } from "./errors.js";
import { openPostgresStorage, type PostgresStorage } from "./postgres-storage.js";
import { openSqliteStorage, type SqliteStorage } from "./sqlite-storage.js";

/** Whether a string names a storage {@link openStorage} can open: `sqlite:PATH` or `postgres://…[?schema=NAME]`. */
export function isStorageSpec(spec: string): boolean {
  return /^sqlite:.+/.test(spec) || /^postgres(ql)?:\/\/./.test(spec);
}

/**
 * Opens the storage a string names: `sqlite:PATH` (a file, or `sqlite::memory:`), or a PostgreSQL URL whose
 * optional `schema` query parameter selects the schema (default `public`; see {@link openPostgresStorage}).
 *
 * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` for an unsupported string, `ERR_X_RMQ_STORAGE_BACKEND` when it
 *   cannot be opened
 */
export async function openStorage(spec: string, logger?: Logger): Promise<SqliteStorage | PostgresStorage> {
  if (spec.startsWith("sqlite:"))
    return openSqliteStorage(spec.slice("sqlite:".length), logger ? { logger } : {});
  if (/^postgres(ql)?:\/\//.test(spec)) return openPostgresStorage(spec, logger ? { logger } : {});
  throw new RmqStorageError(
    ErrorCode.INVALID_OPTION,
    `invalid option storage: ${JSON.stringify(redactUrl(spec))} (expected sqlite:PATH or postgres://…)`,
  );
}
