import { amqpRefusal } from "@x/core/internal";

/**
 * What a failed connection attempt means for whoever makes it:
 * - `config`: the broker answered and refused (a login refused, a virtual host that does not exist or that the
 *   user may not open, a TLS certificate that does not verify): trying again cannot help;
 * - `unavailable`: nothing answers at that address (connection refused, a host name that does not resolve);
 *   a broker that is restarting looks the same for a few seconds;
 * - `transient`: anything else (a timeout, a reset, a broker still booting that closes the handshake).
 */
export type ConnectFailureKind = "config" | "unavailable" | "transient";

/** A failed attempt, classified, with the broker's (or the system's) own reason in one line. */
export interface ConnectFailure {
  kind: ConnectFailureKind;
  reason: string;
}

/** Error codes of the system for an address where nothing answers (refused, no such host). */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_NONAME", "EAI_FAIL"]);

/**
 * Classifies an error of `amqplib.connect` for the URL it was trying (used to name the virtual host, whose
 * refusal amqplib reports without the broker's text).
 */
export function classifyConnectFailure(error: unknown, url: string): ConnectFailure {
  const { message, code } = error as { message?: unknown; code?: unknown };
  const text = typeof message === "string" ? message : String(error);
  if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return { kind: "unavailable", reason: text };
  const refusal = amqpRefusal(text, url);
  if (refusal !== undefined) return { kind: "config", reason: refusal };
  if (typeof code === "string" && /CERT|ERR_TLS_CERT|SELF_SIGNED/.test(code))
    return { kind: "config", reason: `TLS: ${text}` };
  return { kind: "transient", reason: text };
}
