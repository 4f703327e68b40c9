/**
 * A completely read HTTP response of the catalog. The body is read once; {@link CatalogResponse.json} parses
 * it again on every call, so a caller may mutate the result without touching the response cache.
 */
export class CatalogResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** The response headers. */
  readonly headers: Headers;
  /** The `ETag` header verbatim, quotes included, or `null` when absent. */
  readonly etag: string | null;
  /** The full request URL. */
  readonly url: string;
  readonly #body: string;

  /**
   * @param status - the HTTP status code
   * @param headers - the response headers
   * @param url - the full request URL
   * @param body - the whole body as text
   */
  constructor(status: number, headers: Headers, url: string, body: string) {
    this.status = status;
    this.headers = headers;
    this.etag = headers.get("etag");
    this.url = url;
    this.#body = body;
  }

  /** The body as text (`""` for a 204 or 304). */
  text(): string {
    return this.#body;
  }

  /** The body parsed as JSON, a fresh value on every call. Throws a `SyntaxError` when it is not JSON. */
  json(): unknown {
    return JSON.parse(this.#body);
  }
}
