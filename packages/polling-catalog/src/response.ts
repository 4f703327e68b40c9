import { type InspectOptions, inspect } from "node:util";
import { inspectAs, redactedMark } from "./redact.js";

/** Response headers that carry a credential: shown as `***` by {@link CatalogResponse.toJSON}. */
const secretHeaders = new Set(["set-cookie", "authorization", "cookie", "proxy-authorization"]);

/**
 * A completely read HTTP response of the catalog. The body is read once; {@link CatalogResponse.json} parses
 * it again on every call, so a caller may mutate the result without touching the response cache.
 */
export class CatalogResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** The response headers. */
  readonly headers: Headers;
  /** The `ETag` header verbatim (quotes included, surrounding spaces and tabs dropped), or `null` when absent. */
  readonly etag: string | null;
  /** The full request URL. */
  readonly url: string;
  /** The request method: `GET`, `PUT`, `POST` or `DELETE`. */
  readonly method: string;
  readonly #body: string;

  /**
   * @param status - the HTTP status code
   * @param headers - the response headers
   * @param url - the full request URL
   * @param body - the whole body as text
   * @param method - the request method. Default `"GET"`.
   */
  constructor(status: number, headers: Headers, url: string, body: string, method = "GET") {
    this.status = status;
    this.headers = headers;
    // Without the optional whitespace around it, which is not part of an HTTP field value (undici keeps a
    // trailing tab), so that `etag` is byte for byte what `If-Match`/`If-None-Match` will send back.
    this.etag = headers.get("etag")?.replace(/^[\t ]+|[\t ]+$/g, "") ?? null;
    this.url = url;
    this.method = method;
    this.#body = body;
  }

  /** The body as text (`""` for a 204 or 304). */
  text(): string {
    return this.#body;
  }

  /**
   * What `JSON.stringify` and structured loggers print: `status`, `url`, `etag` and the headers, with
   * `Set-Cookie` (and any other credential header) shown as `"***"`. `headers` itself stays complete.
   */
  toJSON(): { status: number; url: string; etag: string | null; headers: Record<string, string> } {
    const headers: Record<string, string> = {};
    for (const [name, value] of this.headers) headers[name] = secretHeaders.has(name) ? redactedMark : value;
    return { status: this.status, url: this.url, etag: this.etag, headers };
  }

  /** What `util.inspect` prints: `CatalogResponse` and {@link CatalogResponse.toJSON}. */
  [inspect.custom](depth: number, options: InspectOptions, nested: typeof inspect): string {
    return inspectAs("CatalogResponse", this.toJSON(), depth, options, nested);
  }

  /** The body parsed as JSON, a fresh value on every call. Throws a `SyntaxError` when it is not JSON. */
  json(): unknown {
    return JSON.parse(this.#body);
  }
}
