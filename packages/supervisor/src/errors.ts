import { XError } from "@x/core";

/** Every stable error code `@x/supervisor` throws; listed in the README. */
export const ErrorCode = {
  /** An argument of a storage or client method is out of its domain (non-integer time, bad version…). */
  BAD_ARGUMENT: "ERR_X_SUPERVISOR_BAD_ARGUMENT",
  /** An option of `startSupervisor` or `runWorker` is invalid; the message names it and its value. */
  INVALID_OPTION: "ERR_X_SUPERVISOR_INVALID_OPTION",
  /** An `enqueue` entry could not travel over the line protocol (space or line break in it). */
  BAD_ENTRY: "ERR_X_SUPERVISOR_BAD_ENTRY",
  /** `enqueue` for a known fetcher whose run is not registered. */
  UNKNOWN_RUN: "ERR_X_SUPERVISOR_UNKNOWN_RUN",
  /** The database's schema version is newer than this package knows (above 2). */
  SCHEMA: "ERR_X_SUPERVISOR_SCHEMA",
  /** Another daemon accepts connections on the socket path. */
  SOCKET_IN_USE: "ERR_X_SUPERVISOR_SOCKET_IN_USE",
  /** A database file cannot be opened (missing directory or file, no permission); the message names it. */
  DATABASE: "ERR_X_SUPERVISOR_DATABASE",
  /** Another daemon (or another `Supervisor` of this process) runs on the database. */
  DATABASE_IN_USE: "ERR_X_SUPERVISOR_DATABASE_IN_USE",
  /** The socket path exists and is not a socket. */
  SOCKET_PATH: "ERR_X_SUPERVISOR_SOCKET_PATH",
  /**
   * A TLS certificate, key or CA file cannot be read or does not make a usable context, or the TLS listener
   * cannot listen on its address.
   */
  TLS: "ERR_X_SUPERVISOR_TLS",
  /** Nobody listens on the socket a client connects to. */
  CONNECT: "ERR_X_SUPERVISOR_CONNECT",
  /** The connection ended before the reply to a command arrived. */
  CONNECTION_CLOSED: "ERR_X_SUPERVISOR_CONNECTION_CLOSED",
  /** The daemon sent a reply that is neither `JOB <attr> <payload>` nor `NOJOBS`. */
  BAD_REPLY: "ERR_X_SUPERVISOR_BAD_REPLY",
} as const;

/** One of the codes of {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * The error class of `@x/supervisor`, an `XError` whose `code` is one of {@link ErrorCode}; test `code` (or
 * use `XError.is(e, code)`) rather than the message.
 */
export class SupervisorError extends XError {
  override name = "SupervisorError";
}
