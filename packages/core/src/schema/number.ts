import type { Message } from "./issue.js";
import { RuledSchema } from "./ruled.js";

/** A number schema; see {@link number}. */
export class NumberSchema extends RuledSchema<number> {
  protected readonly kind = "number";

  protected override accepts(value: unknown): value is number {
    return typeof value === "number" && Number.isFinite(value);
  }

  /** At least `bound`. */
  min(bound: number, message?: Message): this {
    return this.withRule((value) => value >= bound, message, `Too small: expected number to be >=${bound}`);
  }

  /** More than `bound`. */
  gt(bound: number, message?: Message): this {
    return this.withRule((value) => value > bound, message, `Too small: expected number to be >${bound}`);
  }

  /** At most `bound`. */
  max(bound: number, message?: Message): this {
    return this.withRule((value) => value <= bound, message, `Too big: expected number to be <=${bound}`);
  }

  /** At least 0. */
  nonnegative(message?: Message): this {
    return this.min(0, message);
  }

  /** A safe integer; a fraction counts as the wrong kind of value (in a union, the union's message is reported). */
  int(message?: Message): this {
    return this.withRule(Number.isSafeInteger, message, "Invalid input: expected int, received number", true);
  }
}

/**
 * A finite number (`NaN` and infinities are refused).
 *
 * @param message - what is expected, in words: reported for anything else, and for a broken rule without its
 *   own message
 */
export function number(message?: Message): NumberSchema {
  return new NumberSchema(message);
}
