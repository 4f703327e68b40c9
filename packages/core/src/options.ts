import { nearestName } from "./nearest-name.js";
import type { Output, Schema, SchemaError } from "./schema/v.js";
import { XError, type XErrorOptions } from "./x-error.js";

/** A constructor of `XError` or of one of its subclasses that keeps the base signature. */
export type XErrorClass = new (code: string, message: string, options?: XErrorOptions) => XError;

/**
 * A short, readable rendering of any value for an error message: strings quoted (so that `""` and `" "`
 * show), plain objects and arrays as JSON where possible, others as `String(value)` gives them, cut to
 * `max` characters.
 *
 * @param value - anything
 * @param max - longest result, in characters. Default 80.
 */
export function describeValue(value: unknown, max = 80): string {
  let text: string;
  if (typeof value === "string") text = JSON.stringify(value);
  else if (Array.isArray(value) || (typeof value === "object" && value !== null && isPlain(value))) {
    try {
      text = JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
    } catch {
      text = String(value);
    }
  } else if (typeof value === "symbol") text = value.toString();
  else if (typeof value === "function") text = `[function ${value.name || "anonymous"}]`;
  else text = String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The error for one bad option: `invalid option <name>: <value> (expected <expected>)`.
 *
 * @param code - the package's code, e.g. `ERR_X_GUARD_INVALID_OPTION`
 * @param option - the option's name (a dotted path for nested options)
 * @param value - the offending value
 * @param expected - what would have been accepted, in words
 * @param ErrorClass - the package's `XError` subclass. Default `XError`.
 * @param cause - the validator's error, if any
 */
export function optionError(
  code: string,
  option: string,
  value: unknown,
  expected: string,
  ErrorClass: XErrorClass = XError,
  cause?: unknown,
): XError {
  const message = `invalid option ${option}: ${describeValue(value)} (expected ${expected})`;
  return new ErrorClass(code, message, cause === undefined ? undefined : { cause });
}

/**
 * The error for an option nobody declares: `unknown option <name>: <value>; did you mean <nearest>?` when a
 * known name is close (in another case or spelling, without its unit suffix, or a few typos away), else
 * `unknown option <name>: <value> (the options are …)`.
 *
 * @param code - the package's code, e.g. `ERR_X_GUARD_INVALID_OPTION`
 * @param option - the unknown option's name (a dotted path for nested options)
 * @param value - its value
 * @param known - the names accepted at that level (without the parents' path)
 * @param ErrorClass - the package's `XError` subclass. Default `XError`.
 * @param cause - the validator's error, if any
 */
export function unknownOptionError(
  code: string,
  option: string,
  value: unknown,
  known: readonly string[],
  ErrorClass: XErrorClass = XError,
  cause?: unknown,
): XError {
  const dot = option.lastIndexOf(".");
  const parent = option.slice(0, dot + 1);
  const nearest = nearestName(option.slice(dot + 1), known);
  const hint =
    nearest !== undefined
      ? `; did you mean ${parent}${nearest}?`
      : known.length > 0
        ? ` (the options are ${known.map((name) => parent + name).join(", ")})`
        : " (this takes no options)";
  const message = `unknown option ${option}: ${describeValue(value)}${hint}`;
  return new ErrorClass(code, message, cause === undefined ? undefined : { cause });
}

/**
 * Validates an options object against a schema of `v` and returns the output (defaults applied).
 * The first problem becomes an {@link optionError} naming the option and its value, with the
 * {@link SchemaError} as `cause`; an unknown key of a strict object is an {@link unknownOptionError}, which
 * suggests the nearest declared name. Give each field an
 * `error` message that says what is expected and in which unit.
 *
 * @param schema - the schema of the whole options object, usually a `v.strictObject`
 * @param input - what the caller passed (`undefined` counts as `{}`)
 * @param code - the package's option error code
 * @param ErrorClass - the package's `XError` subclass. Default `XError`.
 */
export function parseOptions<S extends Schema<unknown>>(
  schema: S,
  input: unknown,
  code: string,
  ErrorClass: XErrorClass = XError,
): Output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data as Output<S>;
  const issue = result.error.issues[0];
  const path = issue?.path ?? [];
  const option = path.length > 0 ? path.map(String).join(".") : "options";
  const value = path.reduce<unknown>(
    (node, key) =>
      node !== null && typeof node === "object" ? (node as Record<PropertyKey, unknown>)[key] : undefined,
    input,
  );
  if (issue?.code === "unknown_key")
    throw unknownOptionError(code, option, value, issue.known ?? [], ErrorClass, result.error);
  throw optionError(code, option, value, issue?.message ?? "a valid value", ErrorClass, result.error);
}
