import type { InspectOptions } from "node:util";

/** What every redacted secret is replaced with. */
export const redactedMark = "***";

/**
 * The URL with its password replaced by `***` (`amqp://user:***@host/`), for logs, errors, events and
 * `util.inspect`. A string that does not parse as a URL but has a user-info part loses all of it
 * (`amqp://***@host`): a malformed URL is no reason to print a password.
 *
 * @param url - any string, typically an `amqp://` or `amqps://` URL
 */
export function redactUrl(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed) {
    if (parsed.password !== "") parsed.password = redactedMark;
    return parsed.href;
  }
  const at = url.lastIndexOf("@");
  if (at === -1) return url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? "";
  return `${scheme}${redactedMark}@${url.slice(at + 1)}`;
}

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
