import { XError } from "@x/core";

/** The stable error codes of `@x/checkpoint`. The README's Errors table says when each one happens. */
export const ErrorCode = {
  /** A name or an option is missing, of the wrong type or out of range; the message names it and its value. */
  INVALID_OPTION: "ERR_X_CHECKPOINT_INVALID_OPTION",
  /** Two dependencies of one checkpoint have the same name. */
  DUPLICATE_DEPENDENCY: "ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY",
  /** `heartbeat` or `dependency` named a dependency the checkpoint does not have. */
  UNKNOWN_DEPENDENCY: "ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY",
  /** `heartbeat` named no dependency although the checkpoint has several. */
  DEPENDENCY_REQUIRED: "ERR_X_CHECKPOINT_DEPENDENCY_REQUIRED",
  /** A marker is null or undefined, or is not a valid `Date` where a default check compares it. */
  MARKER_TYPE: "ERR_X_CHECKPOINT_MARKER_TYPE",
  /** A pulse state, or the state read from the cache, is not a plain object of structured-cloneable values. */
  STATE_TYPE: "ERR_X_CHECKPOINT_STATE_TYPE",
  /** The constructor was given a cache whose `get` returns a promise: use `Checkpoint.open`. */
  ASYNC_CACHE: "ERR_X_CHECKPOINT_ASYNC_CACHE",
  /** The cache holds a value this package cannot read; the message names the key. */
  CORRUPT: "ERR_X_CHECKPOINT_CORRUPT",
  /** `MemoryCache`, `SqliteCache` or `RedisCache` was asked to store a value that cannot be stored. */
  CACHE_VALUE: "ERR_X_CHECKPOINT_CACHE_VALUE",
  /** A `SqliteCache` was used after `close()`. */
  CACHE_CLOSED: "ERR_X_CHECKPOINT_CACHE_CLOSED",
  /** A `SqliteCache` path cannot be opened as a database (the driver's error is the `cause`). */
  CACHE_OPEN: "ERR_X_CHECKPOINT_CACHE_OPEN",
  /**
   * A `RedisCache` command failed: the client is closed, or Redis answered with an error (a refused login, a
   * server out of memory or read-only). The message names the command and the key; the client's error is the `cause`.
   */
  CACHE_IO: "ERR_X_CHECKPOINT_CACHE_IO",
  /** `better-sqlite3`, needed by `SqliteCache`, is not installed or does not load. */
  SQLITE_UNAVAILABLE: "ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE",
  /** An engine adapter cannot read its stream: it does not exist, is not a stream (a classic queue), or access is refused. */
  NOT_A_STREAM: "ERR_X_CHECKPOINT_NOT_A_STREAM",
  /**
   * An engine adapter's broker refused the connection for good before the stream ever read: a login refused
   * (a wrong password or user), a virtual host the user may not open. Not retried; the message names the
   * stream and gives the broker's reason.
   */
  ACCESS_REFUSED: "ERR_X_CHECKPOINT_ACCESS_REFUSED",
  /**
   * Nothing answered at an engine adapter's broker address (connection refused, a host name that does not
   * resolve) for 3 s in a row before the stream ever read. The message names the stream and the address.
   */
  UNREACHABLE: "ERR_X_CHECKPOINT_UNREACHABLE",
  /** The installed `better-sqlite3` is not 12.x or 13.x, or does not support the running Node. */
  SQLITE_VERSION: "ERR_X_CHECKPOINT_SQLITE_VERSION",
} as const;

/** One of the codes of {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * The error class of `@x/checkpoint`: an {@link XError} whose `code` is one of {@link ErrorCode}. Test errors
 * with `XError.is(error, ErrorCode.MARKER_TYPE)`, which also works across duplicate installs.
 */
export class CheckpointError extends XError {
  override name = "CheckpointError";
}
