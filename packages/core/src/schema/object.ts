import { type Context, INVALID, type Message } from "./issue.js";
import { RuledSchema } from "./ruled.js";
import type { AnySchema, Output } from "./schema.js";

/** The schemas of an object's keys. */
export type Shape = Readonly<Record<string, AnySchema>>;

/** Flattens an intersection of object types into one, for readable types. */
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The output of an object schema: keys whose output may be `undefined` are optional. */
export type ObjectOutput<S extends Shape> = Flat<
  { [K in keyof S as undefined extends Output<S[K]> ? never : K]: Output<S[K]> } & {
    [K in keyof S as undefined extends Output<S[K]> ? K : never]?: Output<S[K]>;
  }
>;

/** Whether `value` is an object that is not an array (or `null`). */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An object schema; see {@link object} and {@link strictObject}. */
export class ObjectSchema<S extends Shape> extends RuledSchema<ObjectOutput<S>> {
  protected readonly kind = "object";
  /** The schema of each key. */
  readonly shape: S;
  /** Unknown keys are refused (else dropped). */
  protected readonly strictKeys: boolean;

  /**
   * @param shape - the schema of each key
   * @param strict - refuse unknown keys, rather than drop them
   * @param message - what is expected, in words
   */
  constructor(shape: S, strict: boolean, message?: Message) {
    super(message);
    this.shape = shape;
    this.strictKeys = strict;
  }

  /** The same object schema, refusing unknown keys. */
  strict(): ObjectSchema<S> {
    return new ObjectSchema(this.shape, true, this.error);
  }

  protected override content(value: unknown, ctx: Context): ObjectOutput<S> | typeof INVALID {
    if (!isObject(value)) {
      this.reportKind(value, ctx);
      return INVALID;
    }
    const output: Record<string, unknown> = {};
    let valid = true;
    for (const key in this.shape) {
      const schema = this.shape[key] as AnySchema;
      ctx.path.push(key);
      const item = schema.check(value[key], ctx);
      ctx.path.pop();
      if (item === INVALID) valid = false;
      else if (item !== undefined || key in value) output[key] = item;
    }
    if (this.strictKeys) {
      for (const key of Object.keys(value)) {
        if (Object.hasOwn(this.shape, key)) continue;
        ctx.report(
          `Unrecognized key: ${JSON.stringify(key)}`,
          false,
          key,
          "unknown_key",
          Object.keys(this.shape),
        );
        valid = false;
      }
    }
    return valid ? (output as ObjectOutput<S>) : INVALID;
  }
}

/**
 * An object with the keys of `shape`; other keys are dropped (see {@link strictObject} to refuse them). A
 * key's issue is reported at its name (`parent.key`).
 */
export function object<S extends Shape>(shape: S, message?: Message): ObjectSchema<S> {
  return new ObjectSchema(shape, false, message);
}

/** An object with the keys of `shape` and no other: an unknown key is an issue (`"unknown_key"`). */
export function strictObject<S extends Shape>(shape: S, message?: Message): ObjectSchema<S> {
  return new ObjectSchema(shape, true, message);
}
