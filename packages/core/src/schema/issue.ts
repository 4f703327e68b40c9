/**
 * One problem found while validating a value against a {@link Schema}.
 *
 * `fatal` issues say the value is not even of the expected kind (a wrong type, a value outside an enum, a
 * failed `custom` test); the others say a value of the right kind broke a rule (a bound, a pattern, a
 * refinement, an unknown key). A union reports the issues of its one option that failed only by rules, when
 * there is exactly one such option, and its own message otherwise.
 */
export interface Issue {
  /** Where in the value: object keys and array indexes, outermost first; empty for the value itself. */
  readonly path: readonly PropertyKey[];
  /** What was expected, in words (the schema's `error`, or a generic text). */
  readonly message: string;
  /** `"unknown_key"` for a key a strict object does not declare (its path ends with that key). */
  readonly code: "invalid" | "unknown_key";
  /** The value is not of the expected kind, rather than breaking a rule. */
  readonly fatal: boolean;
  /** For an `"unknown_key"`: the keys the object does declare, for a "did you mean …?" hint. */
  readonly known?: readonly string[];
}

/** The error of {@link Schema.parse}, and the `cause` of `parseOptions`' errors: every issue found, first one first. */
export class SchemaError extends Error {
  /** The issues, in the order they were found; there is at least one. */
  readonly issues: readonly Issue[];

  /** @param issues - at least one issue */
  constructor(issues: readonly Issue[]) {
    const first = issues[0];
    const where = first === undefined || first.path.length === 0 ? "value" : first.path.map(String).join(".");
    super(`invalid ${where}: ${first?.message ?? "invalid input"}`);
    this.name = "SchemaError";
    this.issues = issues;
  }
}

/** The outcome of {@link Schema.safeParse}: the output, or the issues. */
export type ParseResult<T> =
  | { readonly success: true; readonly data: T }
  | { readonly success: false; readonly error: SchemaError };

/** A message given to a schema or a check: the text, or `{ error: text }`. */
export type Message = string | { readonly error?: string };

/** The text of a {@link Message}, if any. */
export function messageOf(message: Message | undefined): string | undefined {
  return typeof message === "string" ? message : message?.error;
}

/** What a validator returns instead of an output when the value is invalid. */
export const INVALID: unique symbol = Symbol("invalid");

/**
 * The state of one validation: where the validator is (a stack of keys) and what it found so far.
 * Validators push a key before validating a child and pop it after.
 */
export class Context {
  /** The current path, outermost first. */
  readonly path: PropertyKey[] = [];
  /** Issues found so far. */
  issues: Issue[] = [];

  /** Records an issue at the current path (plus `key`, if given); `known` as in {@link Issue.known}. */
  report(
    message: string,
    fatal: boolean,
    key?: PropertyKey,
    code: Issue["code"] = "invalid",
    known?: readonly string[],
  ): void {
    const path = key === undefined ? this.path.slice() : [...this.path, key];
    this.issues.push(
      known === undefined ? { path, message, code, fatal } : { path, message, code, fatal, known },
    );
  }
}

/** How a value shows in a generic message: its type, or `NaN`, `Infinity`, `null`, `array`. */
export function receivedOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && !Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : "Infinity";
  if (value instanceof Date) return "Date";
  return typeof value;
}
