import { ErrorCode, PollingCatalogError } from "./errors.js";

/** A response body read within a size bound. */
export interface BoundedBody {
  /** The body decoded as UTF-8, as `Response.text()` decodes it (a BOM dropped, bad bytes as U+FFFD). */
  text: string;
  /** Its size in bytes, as received (after any `Content-Encoding` was undone). */
  bytes: number;
}

/**
 * Reads a fetch response's body, stopping as soon as it exceeds `maxBytes`: a declared `Content-Length` over
 * the bound is refused before reading anything, and a body that grows past it while streaming is cancelled
 * (which closes the connection), so no more than about `maxBytes` plus one chunk is ever held. The body of a
 * `421 Misdirected Request` is not read at all (`""`).
 *
 * @param response - the fetch response, body unread
 * @param maxBytes - the bound, in bytes
 * @param what - names the request in the error, e.g. `GET https://…/entity/S:T`
 * @param abort - aborts the request (its connection), called before the body is cancelled: cancelling alone
 *   leaves undici's parser paused on a socket that may still end, which can trip an assertion in undici
 * @throws {@link PollingCatalogError} `ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE`
 */
export async function readBoundedBody(
  response: Response,
  maxBytes: number,
  what: string,
  abort: () => void = () => {},
): Promise<BoundedBody> {
  if (response.status === 421) {
    // Misdirected Request: fetch has already sent it again on a new connection, and when that answer's body is
    // broken (truncated, mis-chunked) undici never ends its stream. Its body is not read.
    abort();
    await response.body?.cancel().catch(() => {});
    return { text: "", bytes: 0 };
  }
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    abort();
    await response.body?.cancel().catch(() => {});
    throw tooLarge(what, response.status, maxBytes, `declares ${declared} bytes`);
  }
  if (response.body === null) return { text: "", bytes: 0 };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      abort();
      await reader.cancel().catch(() => {});
      throw tooLarge(what, response.status, maxBytes, `had sent more than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks, bytes)), bytes };
}

function tooLarge(what: string, status: number, maxBytes: number, detail: string): PollingCatalogError {
  return new PollingCatalogError(
    ErrorCode.RESPONSE_TOO_LARGE,
    `the response to ${what} (HTTP ${status}) ${detail}, over maxResponseBytes (${maxBytes}); the rest was not read`,
  );
}
