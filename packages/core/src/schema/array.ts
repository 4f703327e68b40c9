import { type Context, INVALID, type Message } from "./issue.js";
import { RuledSchema } from "./ruled.js";
import type { AnySchema, Output, Schema } from "./schema.js";

/** Validates `items[i]` with `schemas(i)` for every index; the outputs, or `INVALID` if any item is invalid. */
function checkItems(
  items: readonly unknown[],
  schemaAt: (index: number) => AnySchema,
  ctx: Context,
): unknown[] | typeof INVALID {
  const output: unknown[] = new Array(items.length);
  let valid = true;
  for (let i = 0; i < items.length; i++) {
    ctx.path.push(i);
    const item = schemaAt(i).check(items[i], ctx);
    ctx.path.pop();
    if (item === INVALID) valid = false;
    else output[i] = item;
  }
  return valid ? output : INVALID;
}

/** An array schema; see {@link array}. */
export class ArraySchema<T> extends RuledSchema<T[]> {
  protected readonly kind = "array";
  /** The schema of every item. */
  protected readonly item: Schema<T>;

  /**
   * @param item - the schema of every item
   * @param message - what is expected, in words
   */
  constructor(item: Schema<T>, message?: Message) {
    super(message);
    this.item = item;
  }

  protected override content(value: unknown, ctx: Context): T[] | typeof INVALID {
    if (!Array.isArray(value)) {
      this.reportKind(value, ctx);
      return INVALID;
    }
    return checkItems(value, () => this.item, ctx) as T[] | typeof INVALID;
  }

  /** At least `length` items. */
  min(length: number, message?: Message): this {
    return this.withRule(
      (value) => value.length >= length,
      message,
      `Too small: expected array to have >=${length} items`,
    );
  }

  /** At most `length` items. */
  max(length: number, message?: Message): this {
    return this.withRule(
      (value) => value.length <= length,
      message,
      `Too big: expected array to have <=${length} items`,
    );
  }
}

/**
 * An array whose items all match `item`; items are reported by index (`list.2`).
 *
 * @param message - what is expected, in words (not used for the items, which have their own schema)
 */
export function array<T>(item: Schema<T>, message?: Message): ArraySchema<T> {
  return new ArraySchema(item, message);
}

/** The output of a tuple of schemas. */
export type TupleOutput<T extends readonly AnySchema[]> = { -readonly [K in keyof T]: Output<T[K]> };

/** A tuple schema; see {@link tuple}. */
export class TupleSchema<T extends readonly AnySchema[]> extends RuledSchema<TupleOutput<T>> {
  protected readonly kind = "tuple";
  /** The schema of each item. */
  protected readonly items: T;

  /**
   * @param items - the schema of each item
   * @param message - what is expected, in words
   */
  constructor(items: T, message?: Message) {
    super(message);
    this.items = items;
  }

  protected override content(value: unknown, ctx: Context): TupleOutput<T> | typeof INVALID {
    if (!Array.isArray(value)) {
      this.reportKind(value, ctx);
      return INVALID;
    }
    const length = this.items.length;
    if (value.length !== length) {
      const [word, sign] = value.length < length ? ["Too small", ">="] : ["Too big", "<="];
      ctx.report(this.error ?? `${word}: expected array to have ${sign}${length} items`, false);
      return INVALID;
    }
    return checkItems(value, (i) => this.items[i] as AnySchema, ctx) as TupleOutput<T> | typeof INVALID;
  }
}

/** An array of exactly `items.length` items, each matching its schema. */
export function tuple<const T extends readonly AnySchema[]>(items: T, message?: Message): TupleSchema<T> {
  return new TupleSchema(items, message);
}
