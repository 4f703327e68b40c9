/** A raw HTTP exchange with the fake, bypassing the binding, for protocol tests. */
export interface RawReply {
  status: number;
  headers: Headers;
  text: string;
  json: () => unknown;
}

/** Options of {@link raw}. */
export interface RawOptions {
  body?: unknown;
  /** Default `application/json` when there is a body. */
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * Sends one request to `<base><path>` with Node's fetch. A `body` that is a string is sent as is, anything
 * else as JSON.
 */
export async function raw(
  base: string,
  method: string,
  path: string,
  options: RawOptions = {},
): Promise<RawReply> {
  const headers: Record<string, string> = { Accept: "*/*", ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] = options.contentType ?? "application/json";
  }
  const response = await fetch(base + path, { method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}
