import { Context, INVALID, type Message, messageOf, type ParseResult, SchemaError } from "./issue.js";

/**
 * A validator of unknown values that returns a typed output: the base of every schema of `v` (from
 * `@x/core/internal`). Schemas are immutable: each method returns a new schema.
 *
 * @typeParam O - the output type, see {@link Output}
 */
export abstract class Schema<O> {
  /** The output type, for {@link Output}; types only, never set. */
  declare readonly "~output": O;

  /**
   * Validates `value`, reporting problems to `ctx`.
   *
   * @returns the output, or `INVALID` after reporting at least one issue
   * @internal
   */
  abstract check(value: unknown, ctx: Context): O | typeof INVALID;

  /** Validates `value` and returns the output or every issue found, without throwing. */
  safeParse(value: unknown): ParseResult<O> {
    const ctx = new Context();
    const data = this.check(value, ctx);
    if (data === INVALID) return { success: false, error: new SchemaError(ctx.issues) };
    return { success: true, data };
  }

  /**
   * Validates `value` and returns the output.
   *
   * @throws SchemaError with every issue found
   */
  parse(value: unknown): O {
    const result = this.safeParse(value);
    if (!result.success) throw result.error;
    return result.data;
  }

  /** Also accepts `undefined` (an absent key of an object). */
  optional(): Schema<O | undefined> {
    return new Wrapped<O | undefined>((value, ctx) =>
      value === undefined ? undefined : this.check(value, ctx),
    );
  }

  /** Also accepts `null`. */
  nullable(): Schema<O | null> {
    return new Wrapped<O | null>((value, ctx) => (value === null ? null : this.check(value, ctx)));
  }

  /**
   * Replaces `undefined` (an absent key) with `value`, or with what `value()` returns when it is a function,
   * called at each use. The default is not validated.
   */
  default(value: Exclude<O, undefined> | (() => Exclude<O, undefined>)): Schema<Exclude<O, undefined>> {
    return new Wrapped<Exclude<O, undefined>>((input, ctx) => {
      if (input !== undefined) return this.check(input, ctx) as Exclude<O, undefined> | typeof INVALID;
      return typeof value === "function" ? (value as () => Exclude<O, undefined>)() : value;
    });
  }

  /** Replaces any invalid value with `value`, dropping its issues. */
  catch(value: O): Schema<O> {
    return new Wrapped<O>((input, ctx) => {
      const issues = ctx.issues.length;
      const output = this.check(input, ctx);
      if (output !== INVALID) return output;
      ctx.issues.length = issues;
      return value;
    });
  }

  /**
   * Adds a rule on the output: `test` must return `true`. A broken rule is reported with `error` (or
   * "Invalid input"), at `path` below this schema's place when given (to blame one key of an object).
   */
  refine(
    test: (value: O) => boolean,
    message?: Message & { readonly path?: readonly PropertyKey[] },
  ): Schema<O> {
    const text = messageOf(message) ?? "Invalid input";
    const path = typeof message === "object" ? (message.path ?? []) : [];
    return new Wrapped<O>((input, ctx) => {
      const output = this.check(input, ctx);
      if (output === INVALID || test(output)) return output;
      ctx.path.push(...path);
      ctx.report(text, false);
      ctx.path.length -= path.length;
      return INVALID;
    });
  }

  /** Maps a valid output to another value (and type). */
  transform<N>(map: (value: O) => N): Schema<N> {
    return new Wrapped<N>((input, ctx) => {
      const output = this.check(input, ctx);
      return output === INVALID ? INVALID : map(output);
    });
  }
}

/** A schema made of a function: what the modifiers of {@link Schema} return. */
class Wrapped<O> extends Schema<O> {
  readonly #check: (value: unknown, ctx: Context) => O | typeof INVALID;

  constructor(check: (value: unknown, ctx: Context) => O | typeof INVALID) {
    super();
    this.#check = check;
  }

  check(value: unknown, ctx: Context): O | typeof INVALID {
    return this.#check(value, ctx);
  }
}

/**
 * The output type of a schema (defaults applied, transforms done), like zod's `z.output`.
 *
 * @example
 * ```ts
 * const options = v.strictObject({ retries: v.number().int().default(3) });
 * type Parsed = Output<typeof options>; // { retries: number }
 * ```
 */
export type Output<S extends Schema<unknown>> = S["~output"];

/** Any schema. */
export type AnySchema = Schema<unknown>;

/**
 * Maps the input with `map` before validating it with `schema`: for values accepted in two forms (a
 * string to split, say).
 */
export function preprocess<O>(map: (value: unknown) => unknown, schema: Schema<O>): Schema<O> {
  return new Wrapped<O>((value, ctx) => schema.check(map(value), ctx));
}
