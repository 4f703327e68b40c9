import { ErrorCode, PollingCatalogError } from "./errors.js";

/** How deep into `cause` chains to look for the reason of a `fetch failed`. */
const maxCauseDepth = 4;

/**
 * What OpenSSL says, without its error-stack prefix and source position: `wrong version number` from
 * `40BD…:error:0A00010B:SSL routines:tls_validate_record_header:wrong version number:../deps/…:77:`.
 */
function tlsReason(message: string): string | undefined {
  const parts = message.split(":");
  const at = parts.indexOf("SSL routines");
  return at >= 0 ? parts[at + 2] : undefined;
}

/** What one error of a `cause` chain says: its message, or its code, or the messages of its `errors`. */
function reasonOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  const tls = tlsReason(error.message);
  if (tls !== undefined) {
    const plain = code === "ERR_SSL_WRONG_VERSION_NUMBER" ? "; is the server plain http?" : "";
    return `TLS ${tls} (${String(code)}${plain})`;
  }
  if (error.message !== "") return error.message;
  if (error instanceof AggregateError && error.errors.length > 0)
    return error.errors.map((each) => (each instanceof Error ? reasonOf(each) : String(each))).join("; ");
  return typeof code === "string" ? code : error.name;
}

/**
 * `error` as {@link PollingCatalogError} `ERR_X_POLLING_CATALOG_NETWORK` (with `error` as its `cause`) when
 * it is a transport failure that survived the retries: undici's bare `TypeError: fetch failed` (or
 * `terminated`), whose reason is only in its `cause`, or the `TimeoutError` of `attemptTimeoutMs`. The message
 * names the request and every reason down the chain, e.g.
 * `GET http://127.0.0.1:1/ermrest/catalog/1/entity/S:T: fetch failed: connect ECONNREFUSED 127.0.0.1:1`.
 * Any other error is returned as it is.
 *
 * @param error - what the last attempt rejected with
 * @param what - names the request, e.g. `GET https://…/entity/S:T`
 */
export function networkError(error: unknown, what: string): unknown {
  const bare =
    (error instanceof TypeError && (error.message === "fetch failed" || error.message === "terminated")) ||
    (error instanceof Error && error.name === "TimeoutError");
  if (!bare) return error;
  const reasons: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth <= maxCauseDepth && current instanceof Error; depth++) {
    const reason = reasonOf(current);
    if (!reasons.includes(reason)) reasons.push(reason);
    current = current.cause;
  }
  return new PollingCatalogError(ErrorCode.NETWORK, `${what}: ${reasons.join(": ")}`, { cause: error });
}
