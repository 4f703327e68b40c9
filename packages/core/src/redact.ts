import type { InspectOptions } from "node:util";

/** What every redacted secret is replaced with. */
export const redactedMark = "***";

/**
 * The URL with its password replaced by `***` (`amqp://user:***@host/`), for logs, errors, events and
 * `util.inspect`. A string with an `@` that does not parse as a URL whose user information ends at its only
 * `@` (a malformed URL, a password with an unencoded `@`, `/`, `#` or `?`) shows everything from the scheme to
 * the last `@` as `***` (`amqp://***@host`): a malformed URL is no reason to print a password.
 *
 * @param url - any string, typically an `amqp://`, `amqps://` or `postgres://` URL
 */
export function redactUrl(url: string): string {
  const at = url.lastIndexOf("@");
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (at === -1) return parsed?.href ?? url;
  // One `@` that ends the user information: the URL parser found the whole password. Anything else (a password
  // holding `@`, `/`, `#` or `?` unencoded, a URL that does not parse) is masked from the scheme to the last `@`.
  if (parsed && parsed.password !== "" && url.indexOf("@") === at) {
    parsed.password = redactedMark;
    return parsed.href;
  }
  if (parsed && parsed.username !== "" && url.indexOf("@") === at) return parsed.href;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? "";
  return `${scheme}${redactedMark}@${url.slice(at + 1)}`;
}

/**
 * `util.inspect.custom` (the same registered symbol) without importing `node:util`, whose ESM import costs
 * a few ms of a package's import time (#31).
 */
export const inspectCustom: unique symbol = Symbol.for("nodejs.util.inspect.custom") as never;

/**
 * Renders `shape` for `util.inspect` under the class name `name`, honouring the caller's options (depth,
 * colours), as the `[util.inspect.custom]` method of an object that holds a secret returns it.
 */
export function inspectAs(
  name: string,
  shape: object,
  depth: number,
  options: InspectOptions,
  inspect: (value: unknown, options?: InspectOptions) => string,
): string {
  if (depth < 0) return `${name} {}`;
  const nested = { ...options, depth: options.depth == null ? options.depth : options.depth - 1 };
  return `${name} ${inspect(shape, nested)}`;
}
