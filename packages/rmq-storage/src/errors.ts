import { XError } from "@x/core";

/** The stable error codes of `@x/rmq-storage`. */
export const ErrorCode = {
  /** A write or read got an invalid id, date, path, URL, relation, entity or shape. */
  BAD_INPUT: "ERR_X_RMQ_STORAGE_BAD_INPUT",
  /** An option of a factory is missing, of the wrong type or out of range; the message names it and its value. */
  INVALID_OPTION: "ERR_X_RMQ_STORAGE_INVALID_OPTION",
  /**
   * A method was called after `close()` / `stop()`; or, as the reason of a write that resolved `false`, the
   * client was closed before the write completed.
   */
  CLOSED: "ERR_X_RMQ_STORAGE_CLOSED",
  /**
   * The broker could not be reached within `connectTimeoutMs` (timeouts, resets, a broker still booting);
   * the message ends with the last attempt's reason.
   */
  CONNECT: "ERR_X_RMQ_STORAGE_CONNECT",
  /**
   * The broker refused the connection for good: login refused (403 ACCESS_REFUSED), a virtual host that does
   * not exist or that the user may not open (530 NOT_ALLOWED), a TLS certificate that does not verify.
   * Not retried; the message gives the broker's reason. A configuration error (the CLI exits 78).
   */
  ACCESS_REFUSED: "ERR_X_RMQ_STORAGE_ACCESS_REFUSED",
  /**
   * Nothing answers at any of the broker addresses: the connection is refused or the host name does not
   * resolve, for 3 s in a row when connecting at start. The broker is unavailable (the CLI exits 69).
   */
  UNREACHABLE: "ERR_X_RMQ_STORAGE_UNREACHABLE",
  /** An exchange or queue already exists with other arguments. */
  TOPOLOGY: "ERR_X_RMQ_STORAGE_TOPOLOGY",
  /** A queue of the topology to delete has a consumer or holds messages (delete it anyway with `force`). */
  IN_USE: "ERR_X_RMQ_STORAGE_IN_USE",
  /** `waitForServer` timed out: some worker queue had no consumer (no server serves its range). */
  NO_SERVER: "ERR_X_RMQ_STORAGE_NO_SERVER",
  /**
   * Why a write resolved `false` (see `RmqStorageClient`'s `failed` event and `lastFailure`): a message came
   * back unroutable, no queue being bound to its exchange and routing key: no server has declared the
   * topology of this prefix (none running, or another `prefix`).
   */
  UNROUTABLE: "ERR_X_RMQ_STORAGE_UNROUTABLE",
  /** Why a write resolved `false`: the broker nacked a message. */
  NACKED: "ERR_X_RMQ_STORAGE_NACKED",
  /** Why a write resolved `false`: the server answered an error for a message (the message gives it). */
  REJECTED: "ERR_X_RMQ_STORAGE_REJECTED",
  /** Why a write resolved `false`: no progress for T = max(`waitMinMs`, messages × `waitPerBatchMs`) ms. */
  TIMED_OUT: "ERR_X_RMQ_STORAGE_TIMED_OUT",
  /** A storage could not be opened, or a read failed (`cause` set). */
  BACKEND: "ERR_X_RMQ_STORAGE_BACKEND",
  /** The database driver of the storage asked for (`better-sqlite3` or `pg`) is not installed or does not load. */
  DRIVER_UNAVAILABLE: "ERR_X_RMQ_STORAGE_DRIVER_UNAVAILABLE",
  /** The installed database driver is a version this package does not support, or does not support this Node. */
  DRIVER_VERSION: "ERR_X_RMQ_STORAGE_DRIVER_VERSION",
} as const;

/** One of the codes of {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Every error thrown by `@x/rmq-storage`: an `XError` whose `code` is one of {@link ErrorCode}. */
export class RmqStorageError extends XError {
  override name = "RmqStorageError";
}

/** `ERR_X_RMQ_STORAGE_BAD_INPUT` naming the method and the offending value. */
export function badInput(method: string, what: string, ...value: [unknown?]): RmqStorageError {
  const shown = value.length > 0 ? `: ${describe(value[0])}` : "";
  return new RmqStorageError(ErrorCode.BAD_INPUT, `${method}: ${what}${shown}`);
}

/** `ERR_X_RMQ_STORAGE_CLOSED` for a call on a closed object. */
export function closedError(what: string, method: string): RmqStorageError {
  return new RmqStorageError(ErrorCode.CLOSED, `${method}: the ${what} is closed`);
}

/** `ERR_X_RMQ_STORAGE_BACKEND` wrapping the storage's own error. */
export function backendError(message: string, cause: unknown): RmqStorageError {
  const detail = cause instanceof Error ? `: ${cause.message}` : "";
  return new RmqStorageError(ErrorCode.BACKEND, `${message}${detail}`, { cause });
}

function describe(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = JSON.stringify(value);
  else if (typeof value === "bigint") text = `${value}n`;
  else if (value instanceof Uint8Array) text = `<${value.length} bytes>`;
  else if (value instanceof Date)
    text = `Date(${Number.isNaN(value.getTime()) ? "invalid" : value.toISOString()})`;
  else {
    try {
      text = JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v)) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
