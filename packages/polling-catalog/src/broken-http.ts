import { ErrorCode, PollingCatalogError } from "./errors.js";

/** Names of undici's errors for an answer that is not valid HTTP. */
const brokenNames = new Set([
  "HTTPParserError",
  "HeadersOverflowError",
  "ResponseContentLengthMismatchError",
  "ResponseExceededMaxSizeError",
  "AssertionError",
]);
/** Codes of undici and URL parsing for an answer that is not valid HTTP. */
const brokenCodes = new Set([
  "UND_ERR_HEADERS_OVERFLOW",
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
  "UND_ERR_RES_EXCEEDED_MAX_SIZE",
  "ERR_ASSERTION",
  "ERR_INVALID_URL",
]);
/** Code prefixes of zlib's gzip, deflate, brotli and zstd errors: a body its `Content-Encoding` refutes. */
const decompressionPrefixes = ["Z_", "ZSTD_", "BROTLI_", "ERR__ERROR_", "ERR_BROTLI", "ERR_ZSTD", "ERR_ZLIB"];

/**
 * What undici's fetch says of a redirect it cannot follow: a loop, a scheme other than http(s), or a redirect
 * whose own body breaks HTTP ("Request was cancelled.", never said of an abort of ours, which rejects with the
 * signal's reason instead of `fetch failed`).
 */
const brokenRedirectMessages = new Set([
  "redirect count exceeded",
  "URL scheme must be a HTTP(S) scheme",
  "Request was cancelled.",
]);
/** How deep into `cause` chains to look. */
const maxCauseDepth = 4;

/**
 * `error` as {@link PollingCatalogError} `ERR_X_POLLING_CATALOG_BAD_RESPONSE` (with `error` as its `cause`)
 * when `fetch` failed because the server's answer broke HTTP: a malformed status line or header, headers over
 * undici's 16 KiB, a body that does not match its `Content-Length` or its `Content-Encoding`, a redirect loop,
 * a `Location` that is not a URL or not http(s), an answer undici itself fails on (a `TypeError` without a
 * code, such as two `Location` headers), or a 407 (which fetch refuses without a reason). Any other error is
 * returned as it is (a network error stays one).
 *
 * @param error - what `fetch`, or reading the body, rejected with
 * @param what - names the request, e.g. `GET https://…/entity/S:T`
 */
export function brokenHttpError(error: unknown, what: string): unknown {
  if (!(error instanceof TypeError) || !(error.message === "fetch failed" || error.message === "terminated"))
    return error;
  const cause = error.cause;
  if (cause instanceof Error && cause.message === "" && (cause as { code?: unknown }).code === undefined) {
    // undici's network error without a reason: what fetch makes of a 407 Proxy Authentication Required.
    return new PollingCatalogError(
      ErrorCode.BAD_RESPONSE,
      `the answer to ${what} was refused by fetch (a 407 Proxy Authentication Required: proxies are not supported)`,
      { cause: error },
    );
  }
  let current: unknown = cause;
  for (let depth = 0; depth < maxCauseDepth && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (
      brokenNames.has(current.name) ||
      // A TypeError of undici's own while it handled the answer (two Location headers make it build a URL
      // from a string it cannot): never a network failure, which comes with a code or a SocketError.
      (current instanceof TypeError && code === undefined) ||
      (typeof code === "string" &&
        (brokenCodes.has(code) || decompressionPrefixes.some((prefix) => code.startsWith(prefix)))) ||
      brokenRedirectMessages.has(current.message)
    ) {
      return new PollingCatalogError(
        ErrorCode.BAD_RESPONSE,
        `the answer to ${what} is not valid HTTP: ${current.message}`,
        { cause: error },
      );
    }
    current = current.cause;
  }
  return error;
}
