import type { Message } from "./issue.js";
import { PredicateSchema } from "./predicate.js";

/** A value that {@link literal} can match. */
export type Primitive = string | number | boolean | bigint | null | undefined;

/** `true` or `false`. */
export function boolean(message?: Message): PredicateSchema<boolean> {
  return new PredicateSchema((value) => typeof value === "boolean", "boolean", message);
}

/** A valid `Date` (an invalid date, whose time is `NaN`, is refused). */
export function date(message?: Message): PredicateSchema<Date> {
  return new PredicateSchema(
    (value) => value instanceof Date && !Number.isNaN(value.getTime()),
    "date",
    message,
  );
}

/** Only `undefined`: with `.optional()`, an option that must not be given. */
export function undefinedValue(message?: Message): PredicateSchema<undefined> {
  return new PredicateSchema((value) => value === undefined, "undefined", message);
}

/** Anything, as it is. */
export function unknown(): PredicateSchema<unknown> {
  return new PredicateSchema(() => true, "unknown");
}

/** Exactly `value`, or exactly one of `value` when it is an array. */
export function literal<const T extends Primitive | readonly Primitive[]>(
  value: T,
  message?: Message,
): PredicateSchema<T extends readonly (infer E)[] ? E : T> {
  const values: readonly unknown[] = Array.isArray(value) ? value : [value];
  const generic = `Invalid input: expected ${values.map(String).join("|")}`;
  return new PredicateSchema((input) => values.includes(input), "literal", message, generic);
}

/** One of the strings `values`. */
export function enumOf<const T extends readonly string[]>(
  values: T,
  message?: Message,
): PredicateSchema<T[number]> {
  const generic = `Invalid option: expected one of ${values.map((item) => JSON.stringify(item)).join("|")}`;
  return new PredicateSchema((input) => values.includes(input as string), "enum", message, generic);
}

/** Anything that `test` accepts, typed as `T`: for functions and duck-typed objects. */
export function custom<T>(test: (value: unknown) => boolean, message?: Message): PredicateSchema<T> {
  return new PredicateSchema(test, "custom", message, "Invalid input");
}

/** An instance of `type`. */
// biome-ignore lint/suspicious/noExplicitAny: any constructor, whatever its parameters
export function instanceOf<C extends abstract new (...args: any[]) => unknown>(
  type: C,
  message?: Message,
): PredicateSchema<InstanceType<C>> {
  return new PredicateSchema((value) => value instanceof type, type.name, message);
}
