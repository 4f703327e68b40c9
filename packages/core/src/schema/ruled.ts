import { type Context, INVALID, type Message, messageOf, receivedOf } from "./issue.js";
import { Schema } from "./schema.js";

/** One rule of a {@link RuledSchema}: a test of a value of the right type, and what to say when it fails. */
interface Rule<T> {
  readonly test: (value: T) => boolean;
  /** The rule's own message, if it was given one. */
  readonly message: string | undefined;
  /** The text when neither the rule nor the schema has a message. */
  readonly fallback: string;
  /** Breaking it means a value of the wrong kind (an `int()` given a fraction), as a type mismatch does. */
  readonly fatal: boolean;
}

/**
 * A schema of one kind of value (a string, a number, an array…) with rules added by methods such as `min()`.
 * The message given to the schema (`{ error }`) is reported for a value of the wrong kind and for a broken
 * rule that has no message of its own; without one, a generic text is.
 *
 * @typeParam T - the output type
 */
export abstract class RuledSchema<T> extends Schema<T> {
  /** The schema's message, for a wrong kind of value and for rules without one. */
  protected readonly error: string | undefined;
  /** The rules, tested in order; the first broken one is reported. */
  protected readonly rules: readonly Rule<T>[] = [];

  /** @param message - what is expected, in words */
  constructor(message?: Message) {
    super();
    this.error = messageOf(message);
  }

  /** The kind of value, for the generic message ("expected number, received string"). */
  protected abstract readonly kind: string;

  /**
   * Checks the kind of `value` (and its parts, for a container) and returns the output before the rules, or
   * `INVALID`; the default accepts what {@link RuledSchema.accepts} accepts, as it is.
   */
  protected content(value: unknown, ctx: Context): T | typeof INVALID {
    if (this.accepts(value)) return value;
    this.reportKind(value, ctx);
    return INVALID;
  }

  /** Whether `value` is of this schema's kind; used by the default {@link RuledSchema.content}. */
  protected accepts(_value: unknown): _value is T {
    return false;
  }

  /** Reports `value` as of the wrong kind. */
  protected reportKind(value: unknown, ctx: Context): void {
    ctx.report(this.error ?? `Invalid input: expected ${this.kind}, received ${receivedOf(value)}`, true);
  }

  /**
   * A copy of this schema with one more rule.
   *
   * @param test - whether a value of the right kind keeps the rule
   * @param message - the rule's own message, if given
   * @param fallback - the generic text
   * @param fatal - whether breaking the rule means a value of the wrong kind (an `int()` given a fraction), as
   *   a type mismatch does
   */
  protected withRule(
    test: (value: T) => boolean,
    message: Message | undefined,
    fallback: string,
    fatal = false,
  ): this {
    const rule: Rule<T> = { test, message: messageOf(message), fallback, fatal };
    const copy = Object.create(Object.getPrototypeOf(this) as object) as this;
    return Object.assign(copy, this, { rules: [...this.rules, rule] });
  }

  /** @internal */
  check(value: unknown, ctx: Context): T | typeof INVALID {
    const output = this.content(value, ctx);
    if (output === INVALID) return INVALID;
    for (const rule of this.rules) {
      if (!rule.test(output)) {
        ctx.report(rule.message ?? this.error ?? rule.fallback, rule.fatal);
        return INVALID;
      }
    }
    return output;
  }
}
