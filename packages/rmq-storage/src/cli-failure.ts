import { causeCodes, type FailureKind, systemFailureKind } from "@x/core/internal";
import { ErrorCode } from "./errors.js";

/** Errors whose value (an option, a storage, a topology, a driver) cannot be used as given. */
const unusable: readonly string[] = [
  ErrorCode.INVALID_OPTION,
  ErrorCode.TOPOLOGY,
  ErrorCode.DRIVER_UNAVAILABLE,
  ErrorCode.DRIVER_VERSION,
  ErrorCode.BACKEND,
];

/**
 * PostgreSQL's refusals, by SQLSTATE: class 28 (a login refused: no such user, a wrong password, not allowed
 * by pg_hba.conf) and 3D000 (no such database).
 */
const refusal = (code: string) => /^28[0-9A-Z]{3}$/.test(code) || code === "3D000";

/**
 * The kind of failure of an x-rmq-storage command, which decides its exit status (see the root README's table):
 * a refused login or virtual host (RabbitMQ) or login or database (PostgreSQL); a broker or database that does
 * not answer; a port in use; a value that cannot be used; anything else (a topology in use) is a failure.
 *
 * @param error - why the command failed
 */
export function rmqStorageFailureKind(error: unknown): FailureKind {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (code === ErrorCode.ACCESS_REFUSED) return "refused";
  if (code === ErrorCode.UNREACHABLE || code === ErrorCode.CONNECT) return "unavailable";
  if ([...causeCodes(error)].some(refusal)) return "refused";
  const system = systemFailureKind(error);
  if (system === "in-use" || system === "unavailable") return system;
  if (typeof code === "string" && unusable.includes(code)) return "unusable";
  return system ?? "failure";
}
