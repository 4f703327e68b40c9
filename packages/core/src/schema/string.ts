import type { Message } from "./issue.js";
import { RuledSchema } from "./ruled.js";

/** A string schema; see {@link string}. */
export class StringSchema extends RuledSchema<string> {
  protected readonly kind = "string";

  protected override accepts(value: unknown): value is string {
    return typeof value === "string";
  }

  /** At least `length` characters (UTF-16 code units). */
  min(length: number, message?: Message): this {
    return this.withRule(
      (value) => value.length >= length,
      message,
      `Too small: expected string to have >=${length} characters`,
    );
  }

  /** At most `length` characters (UTF-16 code units). */
  max(length: number, message?: Message): this {
    return this.withRule(
      (value) => value.length <= length,
      message,
      `Too big: expected string to have <=${length} characters`,
    );
  }

  /** Matches `pattern` (anchor it to match the whole string). */
  regex(pattern: RegExp, message?: Message): this {
    return this.withRule(
      (value) => {
        pattern.lastIndex = 0;
        return pattern.test(value);
      },
      message,
      `Invalid string: must match pattern ${pattern}`,
    );
  }
}

/**
 * A string.
 *
 * @param message - what is expected, in words: reported for a non-string, and for a broken rule without its
 *   own message
 */
export function string(message?: Message): StringSchema {
  return new StringSchema(message);
}
