import type { Output, Schema, SchemaError } from "./schema/v.js";
import { XError, type XErrorOptions } from "./x-error.js";

/** A constructor of `XError` or of one of its subclasses that keeps the base signature. */
export type XErrorClass = new (code: string, message: string, options?: XErrorOptions) => XError;

/**
 * A short, readable rendering of any value for an error message: strings quoted, others as `String(value)`
 * gives them (objects as JSON where possible), cut to `max` characters.
 *
 * @param value - anything
 * @param max - longest result, in characters. Default 80.
 */
export function describeValue(value: unknown, max = 80): string {
  let text: string;
  if (typeof value === "string") text = JSON.stringify(value);
  else if (typeof value === "object" && value !== null && !Array.isArray(value) && isPlain(value)) {
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
 * Validates an options object against a schema of `v` and returns the output (defaults applied).
 * The first problem becomes an {@link optionError} naming the option and its value, with the
 * {@link SchemaError} as `cause`; an unknown key of a strict object is "no such option". Give each field an
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
  const expected = issue?.code === "unknown_key" ? "no such option" : (issue?.message ?? "a valid value");
  const option = path.length > 0 ? path.map(String).join(".") : "options";
  const value = path.reduce<unknown>(
    (node, key) =>
      node !== null && typeof node === "object" ? (node as Record<PropertyKey, unknown>)[key] : undefined,
    input,
  );
  throw optionError(code, option, value, expected, ErrorClass, result.error);
}
