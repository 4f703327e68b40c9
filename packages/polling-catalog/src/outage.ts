import { XError } from "@x/core";
import { ErrorCode } from "./errors.js";

/** Socket and DNS-retry codes of Node and undici that mean "the server is not reachable right now". */
const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);
/** Statuses that mean "unavailable" whatever the request: a proxy's or a restarting server's answers. */
const unavailableStatuses = new Set([502, 503, 504]);
/**
 * Statuses of a server under load (429, 500: e.g. `connection pool exhausted`) that are an outage for a request
 * that can be sent again (GET, PUT, DELETE), not for a POST, which may have been applied.
 */
const overloadedStatuses = new Set([429, 500]);
/**
 * How deep into `cause` chains to look: `fetch` wraps the socket error once, `ERR_X_POLLING_CATALOG_NETWORK`
 * wraps `fetch`'s error, callers may wrap again.
 */
const maxCauseDepth = 5;

/**
 * Whether an error means the catalog is unavailable for now, so that retrying later can fix it: a refused,
 * reset or timed-out connection, or an `HTTPError` with status 502, 503 or 504, or 429 or 500 of a request
 * other than POST (after the request's own retries). Anything else (401, 403, 404, 409, a bad URL, an unknown
 * host, a bug) is not. Looks through `cause` chains, so a `lookForWork` that wraps the error keeps the outage
 * handling.
 *
 * @param error - what `lookForWork` threw
 */
export function isOutageError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth <= maxCauseDepth && current instanceof Error; depth++) {
    if (XError.is(current, ErrorCode.HTTP)) {
      const { status, response } = current as XError & { status?: number; response?: { method?: string } };
      if (status === undefined) return false;
      return (
        unavailableStatuses.has(status) || (overloadedStatuses.has(status) && response?.method !== "POST")
      );
    }
    if (current.name === "TimeoutError") return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && unreachableCodes.has(code)) return true;
    current = current.cause;
  }
  return false;
}
