import { type Context, INVALID, type Message } from "./issue.js";
import { RuledSchema } from "./ruled.js";
import type { Schema } from "./schema.js";

/** A record schema; see {@link record}. */
export class RecordSchema<K extends string, V> extends RuledSchema<Record<K, V>> {
  protected readonly kind = "record";
  /** The schema of every key. */
  protected readonly key: Schema<K>;
  /** The schema of every value. */
  protected readonly value: Schema<V>;

  /**
   * @param key - the schema of every key
   * @param value - the schema of every value
   * @param message - what is expected, in words
   */
  constructor(key: Schema<K>, value: Schema<V>, message?: Message) {
    super(message);
    this.key = key;
    this.value = value;
  }

  protected override content(input: unknown, ctx: Context): Record<K, V> | typeof INVALID {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      this.reportKind(input, ctx);
      return INVALID;
    }
    const output: Record<string, unknown> = {};
    let valid = true;
    for (const [name, item] of Object.entries(input)) {
      ctx.path.push(name);
      const key = this.key.check(name, ctx);
      const value = key === INVALID ? INVALID : this.value.check(item, ctx);
      ctx.path.pop();
      if (key === INVALID || value === INVALID) valid = false;
      // a JSON "__proto__" key is data: define it rather than replace the output's prototype
      else if (key === "__proto__")
        Object.defineProperty(output, key, { value, enumerable: true, writable: true, configurable: true });
      else output[key] = value;
    }
    return valid ? (output as Record<K, V>) : INVALID;
  }
}

/**
 * An object used as a map: every key matches `key` and every value matches `value`. An issue is reported at
 * its key (`parent.key`).
 *
 * @param message - what is expected, in words, for a value that is not an object
 */
export function record<K extends string, V>(
  key: Schema<K>,
  value: Schema<V>,
  message?: Message,
): RecordSchema<K, V> {
  return new RecordSchema(key, value, message);
}
