import { type FailureKind, systemFailureKind } from "@x/core/internal";
import { ErrorCode } from "./errors.js";

/** The supervisor's errors that name something in use, and those that name a value that cannot be used. */
const inUse: readonly string[] = [ErrorCode.SOCKET_IN_USE, ErrorCode.DATABASE_IN_USE];
const unusable: readonly string[] = [
  ErrorCode.INVALID_OPTION,
  ErrorCode.DATABASE,
  ErrorCode.SCHEMA,
  ErrorCode.SOCKET_PATH,
  ErrorCode.TLS,
];

/**
 * The kind of failure of an x-supervisor command, which decides its exit status (see the root README's table):
 * a socket, a database or a port in use; a database, socket path, group or TLS file that cannot be used; a
 * daemon that does not answer; anything else is a plain failure.
 *
 * @param error - why the command failed
 */
export function supervisorFailureKind(error: unknown): FailureKind {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code === "string" && inUse.includes(code)) return "in-use";
  if (code === ErrorCode.CONNECT) return "unavailable";
  // A port in use is an error of the listener (TLS's wraps it): the system's code says so.
  const system = systemFailureKind(error);
  if (system === "in-use") return system;
  if (typeof code === "string" && unusable.includes(code)) return "unusable";
  return system ?? "failure";
}
