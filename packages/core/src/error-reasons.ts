/** How deep into a `cause` chain {@link errorReasons} looks. */
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
 * Every reason down an error's `cause` chain, joined by `: `, each said once: what makes undici's bare
 * `TypeError: fetch failed` useful (`fetch failed: connect ECONNREFUSED 127.0.0.1:1`). An error without a
 * message says its code, or its `errors` (an `AggregateError` of several addresses); OpenSSL's messages are
 * cut to their reason (`TLS wrong version number (ERR_SSL_WRONG_VERSION_NUMBER; is the server plain http?)`).
 *
 * @param error - anything thrown
 */
export function errorReasons(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const reasons: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth <= maxCauseDepth && current instanceof Error; depth++) {
    const reason = reasonOf(current);
    if (!reasons.includes(reason)) reasons.push(reason);
    current = current.cause;
  }
  return reasons.join(": ");
}
