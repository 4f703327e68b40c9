import { amqpRefusal, systemFailureKind } from "@x/core/internal";

/**
 * What a failed read means before the stream ever reached its broker:
 * - `refused`: the broker answered and refused (a wrong password, a virtual host the user may not open):
 *   trying again cannot help;
 * - `unavailable`: nothing answers at the address (connection refused, a host name that does not resolve);
 *   a restarting broker looks the same for a few seconds;
 * - `transient`: anything else.
 */
export interface ConnectFailure {
  kind: "refused" | "unavailable" | "transient";
  /** The broker's (or the system's) reason, in one line. */
  reason: string;
}

/** The words of a refused login: Redis (`WRONGPASS`, `NOAUTH`), NATS (`Authorization Violation`). */
const REFUSED_LOGIN = [
  /^(WRONGPASS|NOAUTH)\b/,
  /^(Authorization Violation|Authentication Expired|User Authentication Revoked)/i,
];

/** Classifies an error of a broker client (node-redis, nats.js, amqplib) met while reading a stream. */
export function classifyConnectFailure(error: unknown): ConnectFailure {
  const message = (error as { message?: unknown } | null | undefined)?.message;
  const reason = typeof message === "string" ? message : String(error);
  if (REFUSED_LOGIN.some((words) => words.test(reason)) || (error as Error)?.name === "AuthorizationError")
    return { kind: "refused", reason: `the broker refused the login: ${reason}` };
  const refusal = amqpRefusal(reason);
  if (refusal !== undefined) return { kind: "refused", reason: refusal };
  if (systemFailureKind(error) === "unavailable") return { kind: "unavailable", reason: causeText(error) };
  return { kind: "transient", reason };
}

/** The innermost message of an error's `cause` chain, which names the address (`connect ECONNREFUSED 127.0.0.1:1`). */
function causeText(error: unknown): string {
  let text = String((error as Error)?.message ?? error);
  let e = (error as Error)?.cause;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++, e = e.cause) text = e.message;
  return text;
}
