import { XError } from "@x/core";
import type { CatalogResponse } from "./response.js";

/** The stable error codes of `@x/polling-catalog`. */
export const ErrorCode = {
  /**
   * An option of a constructor, a request, `blockingPoll`, `stateChangeOnce` (`spread` with an update path
   * that renames no column), `startFakeErmrest`, `failNext`, `restart` or `transactionAbortRate` is missing, of
   * the wrong type or out of range; the message names it and its value.
   */
  INVALID_OPTION: "ERR_X_POLLING_CATALOG_INVALID_OPTION",
  /** A request path is not a non-empty string starting with `/`. */
  BAD_PATH: "ERR_X_POLLING_CATALOG_BAD_PATH",
  /** The server answered something the binding cannot use, e.g. a query that is not a JSON array. */
  BAD_RESPONSE: "ERR_X_POLLING_CATALOG_BAD_RESPONSE",
  /**
   * A response body was larger than `maxResponseBytes` (by its `Content-Length` or as it streamed in): the
   * rest was not read and the connection was closed. Not retried.
   */
  RESPONSE_TOO_LARGE: "ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE",
  /**
   * The request never got an answer, after its retries: a refused, reset or timed-out connection, an unknown
   * host, a TLS handshake that failed (`https` to an http server). The message names the request and the
   * reason (`GET <url>: fetch failed: connect ECONNREFUSED 127.0.0.1:1`); `cause` is `fetch`'s error.
   */
  NETWORK: "ERR_X_POLLING_CATALOG_NETWORK",
  /** The server answered with an error status (400–599). */
  HTTP: "ERR_X_POLLING_CATALOG_HTTP",
  /** A GET with `raiseNotModified` was answered 304. */
  NOT_MODIFIED: "ERR_X_POLLING_CATALOG_NOT_MODIFIED",
  /** A guarded write was answered 412: the catalog changed since the guarding GET. */
  CONCURRENT_UPDATE: "ERR_X_POLLING_CATALOG_CONCURRENT_UPDATE",
} as const;

/** One of the codes of {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Every error thrown by `@x/polling-catalog`: an `XError` whose `code` is one of {@link ErrorCode}. Bad
 * options, paths and responses are thrown as this class; error statuses as its subclass {@link HTTPError}.
 */
export class PollingCatalogError extends XError {
  override name = "PollingCatalogError";
}

const bodyPreviewLength = 500;

/**
 * The server answered with an error status. Holds no request headers, so no credential can leak through it.
 *
 * The message is `HTTP <status> <url>: <first 500 characters of the body>`.
 */
export class HTTPError extends PollingCatalogError {
  override name = "HTTPError";
  /** The HTTP status code. */
  readonly status: number;
  /** The full request URL. */
  readonly url: string;
  /** The response body as text. */
  readonly body: string;
  /** The response: for {@link NotModified}, the cached entry when there is one. */
  readonly response: CatalogResponse;

  /**
   * @param response - the response that failed: its status, URL and body fill the error
   * @param code - the error code; subclasses pass their own. Default `ERR_X_POLLING_CATALOG_HTTP`.
   * @param kept - the response stored as `response`. Default `response`.
   */
  constructor(response: CatalogResponse, code: ErrorCode = ErrorCode.HTTP, kept: CatalogResponse = response) {
    const body = response.text();
    super(code, `HTTP ${response.status} ${response.url}: ${body.slice(0, bodyPreviewLength)}`);
    this.status = response.status;
    this.url = response.url;
    this.body = body;
    this.response = kept;
  }
}

/** A GET with `raiseNotModified: true` was answered 304. `response` is the cached entry when there is one. */
export class NotModified extends HTTPError {
  override name = "NotModified";
  /**
   * @param notModified - the 304 response
   * @param cached - the cached entry for the URL, which becomes `response` when given
   */
  constructor(notModified: CatalogResponse, cached?: CatalogResponse) {
    super(notModified, ErrorCode.NOT_MODIFIED, cached ?? notModified);
  }
}

/** A write was answered 412: its `If-Match` no longer matched, so nothing was written. */
export class ConcurrentUpdate extends HTTPError {
  override name = "ConcurrentUpdate";
  /** @param response - the 412 response */
  constructor(response: CatalogResponse) {
    super(response, ErrorCode.CONCURRENT_UPDATE);
  }
}

/** The error for an error status: {@link ConcurrentUpdate} for 412, {@link HTTPError} otherwise. */
export function errorForStatus(response: CatalogResponse): HTTPError {
  return response.status === 412 ? new ConcurrentUpdate(response) : new HTTPError(response);
}
