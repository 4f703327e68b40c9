import { type Context, INVALID, type Message, messageOf } from "./issue.js";
import { type AnySchema, type Output, Schema } from "./schema.js";

/** A union schema; see {@link union}. */
export class UnionSchema<T extends readonly AnySchema[]> extends Schema<Output<T[number]>> {
  /** The options, tried in order. */
  readonly options: T;
  readonly #error: string;

  /**
   * @param options - the schemas, tried in order
   * @param message - what is expected, in words
   */
  constructor(options: T, message?: Message) {
    super();
    this.options = options;
    this.#error = messageOf(message) ?? "Invalid input";
  }

  /** @internal */
  check(value: unknown, ctx: Context): Output<T[number]> | typeof INVALID {
    const found = ctx.issues;
    let near: Context["issues"] | undefined;
    let nearCount = 0;
    try {
      for (const option of this.options) {
        ctx.issues = [];
        const output = option.check(value, ctx);
        if (output !== INVALID) return output as Output<T[number]>;
        if (ctx.issues.every((issue) => !issue.fatal)) {
          near = ctx.issues;
          nearCount++;
        }
      }
    } finally {
      ctx.issues = found;
    }
    if (nearCount === 1 && near !== undefined) found.push(...near);
    else ctx.report(this.#error, true);
    return INVALID;
  }
}

/**
 * The first of `options` that accepts the value. When none does, and exactly one of them failed only by its
 * rules (a string too short, say: the value was of its kind), that option's issues are reported; otherwise the
 * union's message, or "Invalid input".
 */
export function union<const T extends readonly AnySchema[]>(options: T, message?: Message): UnionSchema<T> {
  return new UnionSchema(options, message);
}
