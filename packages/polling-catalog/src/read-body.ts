import { MAX_DURATION_MS } from "@x/core/internal";
import { ErrorCode, PollingCatalogError } from "./errors.js";

/** A response body read within a size bound. */
export interface BoundedBody {
  /** The body decoded as UTF-8, as `Response.text()` decodes it (a BOM dropped, bad bytes as U+FFFD). */
  text: string;
  /** Its size in bytes, as received (after any `Content-Encoding` was undone). */
  bytes: number;
}

/** The bounds of one body read. */
export interface BodyLimits {
  /** The largest body read, in bytes. */
  maxBytes: number;
  /** The longest wait for the next piece of the body, in ms. */
  idleTimeoutMs: number;
}

/** What the idle timer resolves with. */
const stalled = Symbol("stalled");

/**
 * Reads a fetch response's body, stopping as soon as it exceeds `maxBytes`: a declared `Content-Length` over
 * the bound is refused before reading anything, and a body that grows past it while streaming is cancelled
 * (which closes the connection), so no more than about `maxBytes` plus one chunk is ever held. The body of a
 * `421 Misdirected Request` is not read at all (`""`).
 *
 * A body that brings nothing for `idleTimeoutMs` is given up (its connection closed, its stream cancelled): a
 * connection that stalled rejects with a `TimeoutError`, a network error like the attempt's own timeout; a body
 * fetch had received whole but never ended (Node 22's undici 6 does that with a body its `Content-Encoding`
 * refutes, and an abort does not end it) rejects with `ERR_X_POLLING_CATALOG_BAD_RESPONSE`.
 *
 * @param response - the fetch response, body unread
 * @param limits - the size bound and the idle timeout
 * @param what - names the request in the error, e.g. `GET https://…/entity/S:T`
 * @param abort - aborts the request (its connection), called before the body is cancelled: cancelling alone
 *   leaves undici's parser paused on a socket that may still end, which can trip an assertion in undici
 * @throws {@link PollingCatalogError} `ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE` or
 *   `ERR_X_POLLING_CATALOG_BAD_RESPONSE`; a `DOMException` named `TimeoutError`
 */
export async function readBoundedBody(
  response: Response,
  limits: BodyLimits,
  what: string,
  abort: () => void = () => {},
): Promise<BoundedBody> {
  const { maxBytes, idleTimeoutMs } = limits;
  /** Drops the connection, then cancels the body (or its reader, once it has one). */
  const giveUp = async (body: { cancel(): Promise<void> } | null) => {
    abort();
    await body?.cancel().catch(() => {});
  };
  if (response.status === 421) {
    // Misdirected Request: fetch has already sent it again on a new connection, and when that answer's body is
    // broken (truncated, mis-chunked) undici never ends its stream. Its body is not read.
    await giveUp(response.body);
    return { text: "", bytes: 0 };
  }
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await giveUp(response.body);
    throw tooLarge(what, response.status, maxBytes, `declares ${declared} bytes`);
  }
  if (response.body === null) return { text: "", bytes: 0 };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<typeof stalled>((resolve) => {
    timer = setTimeout(resolve, Math.min(idleTimeoutMs, MAX_DURATION_MS), stalled);
  });
  try {
    for (;;) {
      const read = reader.read();
      const next = await Promise.race([read, idle]);
      if (next === stalled) {
        // Aborting drops a live connection and makes its read reject. A body fetch has received whole is past
        // the abort's reach (undici 6 with a body it cannot decode): its read only ends, as done, when cancelled.
        await giveUp(reader);
        const live = await read.then(
          (result) => !result.done,
          () => true,
        );
        throw live
          ? new DOMException(
              `the response to ${what} (HTTP ${response.status}) sent nothing for bodyIdleTimeoutMs (${idleTimeoutMs} ms); the connection was closed`,
              "TimeoutError",
            )
          : new PollingCatalogError(
              ErrorCode.BAD_RESPONSE,
              `the answer to ${what} is not valid HTTP: its body, received whole, did not end within bodyIdleTimeoutMs (${idleTimeoutMs} ms), as Node 22's fetch does with a body its Content-Encoding refutes`,
            );
      }
      timer?.refresh();
      const { done, value } = next;
      if (done) break;
      bytes += value.byteLength;
      if (bytes > maxBytes) {
        await giveUp(reader);
        throw tooLarge(what, response.status, maxBytes, `had sent more than ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks, bytes)), bytes };
}

function tooLarge(what: string, status: number, maxBytes: number, detail: string): PollingCatalogError {
  return new PollingCatalogError(
    ErrorCode.RESPONSE_TOO_LARGE,
    `the response to ${what} (HTTP ${status}) ${detail}, over maxResponseBytes (${maxBytes}); the rest was not read`,
  );
}
