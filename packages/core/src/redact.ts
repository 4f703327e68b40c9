import type { InspectOptions } from "node:util";

/** What every redacted secret is replaced with. */
export const redactedMark = "***";

/**
 * Parameter names (compared in lower case, `-` read as `_`) whose value is a secret wherever they end, and
 * the whole names that are secrets on their own. `sslkey`, `sslcert`, `sslrootcert` and `passfile` name
 * files, not secrets, and stay visible; `scram_client_key` and `api_key` end in `_key` and do not.
 */
const secretEndings = ["password", "passwd", "passphrase", "secret", "token", "_key", "apikey", "signature"];
const secretNames = new Set([
  "pwd",
  "pass",
  "key",
  "sig",
  "auth",
  "authorization",
  "credential",
  "credentials",
  "jwt",
]);

/**
 * Whether a query parameter (`?password=…`) or a libpq `keyword=value` setting of this name carries a
 * secret: its name, in lower case with `-` read as `_`, ends in `password`, `passwd`, `passphrase`,
 * `secret`, `token`, `_key`, `apikey` or `signature`, or is `pwd`, `pass`, `key`, `sig`, `auth`,
 * `authorization`, `credential`, `credentials` or `jwt`. This covers libpq's `password`, `sslpassword`,
 * `oauth_client_secret`, `scram_client_key` and `scram_server_key`, and tokens such as `token`,
 * `access_token`, `api_key`, `client_secret` or `X-Amz-Signature`.
 *
 * @param name - the parameter's name, percent-decoded
 */
export function isSecretParameter(name: string): boolean {
  const key = name.toLowerCase().replaceAll("-", "_");
  return secretNames.has(key) || secretEndings.some((ending) => key.endsWith(ending));
}

/** `name` percent-decoded (`+` read as a space, as a query string means it), or as it is when malformed. */
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll("+", " "));
  } catch {
    return name;
  }
}

/** `name=value` with the value as `***` when the name is a secret's. */
function redactSetting(setting: string): string {
  const equals = setting.indexOf("=");
  if (equals <= 0 || !isSecretParameter(decodedName(setting.slice(0, equals)))) return setting;
  return `${setting.slice(0, equals + 1)}${redactedMark}`;
}

/** A libpq `keyword = value` setting: the value unquoted up to white space, or in single quotes (`\'` escapes). */
const keywordSetting = /(^|\s)([\w.-]+)(\s*=\s*)('(?:\\.|[^'\\])*'?|\S*)/g;

/**
 * `text` with the value of every secret parameter (see {@link isSecretParameter}) as `***`: the query and
 * fragment parameters after the first `?` or `#` (split at `&` and `#` only, as URL parsers split them, so a
 * value holding `;`, `?` or `=` is masked whole), and libpq `keyword=value` settings
 * (`host=db password='s3cret'`).
 */
function redactParameters(text: string): string {
  const start = text.search(/[?#]/);
  const query =
    start === -1
      ? text
      : text.slice(0, start + 1) +
        text
          .slice(start + 1)
          .split(/([&#])/)
          .map(redactSetting)
          .join("");
  return query.replace(keywordSetting, (whole, before: string, name: string, equals: string) =>
    isSecretParameter(name) ? `${before}${name}${equals}${redactedMark}` : whole,
  );
}

/**
 * The URL with every secret in it shown as `***`, for logs, errors, events and `util.inspect`:
 *
 * - the password of its user information (`amqp://user:***@host/`);
 * - the value of every query or fragment parameter, and of every libpq `keyword=value` setting, whose name
 *   is a secret's (it ends in `password`, `secret`, `token`, `_key` or `signature`, among others, or is one
 *   such as `pwd`, `key` or `auth`): `postgres://db/x?password=***&sslpassword=***`, `host=db password=***`.
 *
 * A string with an `@` that does not parse as a URL whose user information ends at its only `@` (a malformed
 * URL, a password with an unencoded `@`, `/`, `#` or `?`) shows everything from the scheme to the last `@` as
 * `***` (`amqp://***@host`), or everything after the scheme when that `@` was inside a secret parameter's
 * value: a malformed URL is no reason to print a password.
 *
 * @param url - any string, typically an `amqp://`, `amqps://`, `postgres://` or `http(s)://` URL
 */
export function redactUrl(url: string): string {
  const text = redactParameters(url);
  const at = text.lastIndexOf("@");
  let parsed: URL | undefined;
  try {
    parsed = new URL(text);
  } catch {
    parsed = undefined;
  }
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0] ?? "";
  // An `@` only inside a secret parameter's value: where the user information ended is unknown.
  if (at === -1) return url.includes("@") ? `${scheme}${redactedMark}` : (parsed?.href ?? text);
  // One `@` that ends the user information: the URL parser found the whole password. Anything else (a password
  // holding `@`, `/`, `#` or `?` unencoded, a URL that does not parse) is masked from the scheme to the last `@`.
  const single = text.indexOf("@") === at && url.indexOf("@") === url.lastIndexOf("@");
  if (parsed && single && parsed.password !== "") {
    parsed.password = redactedMark;
    return parsed.href;
  }
  if (parsed && single && parsed.username !== "") return parsed.href;
  return `${scheme}${redactedMark}@${text.slice(at + 1)}`;
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
