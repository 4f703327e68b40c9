import type { Context, Message } from "./issue.js";
import { RuledSchema } from "./ruled.js";

/**
 * A schema of the values that pass one test: what {@link boolean}, {@link literal}, {@link custom} and the
 * other one-test schemas of `v` build.
 */
export class PredicateSchema<T> extends RuledSchema<T> {
  protected readonly kind: string;
  /** Whether a value is of this kind. */
  protected readonly test: (value: unknown) => boolean;
  /** The generic message for a value of the wrong kind, if not "expected <kind>, received <type>". */
  protected readonly generic: string | undefined;

  /**
   * @param test - whether a value is of this kind
   * @param kind - the kind, for the generic message
   * @param message - what is expected, in words
   * @param generic - the whole generic message, instead of "expected <kind>, received <type>"
   */
  constructor(test: (value: unknown) => boolean, kind: string, message?: Message, generic?: string) {
    super(message);
    this.test = test;
    this.kind = kind;
    this.generic = generic;
  }

  protected override accepts(value: unknown): value is T {
    return this.test(value);
  }

  protected override reportKind(value: unknown, ctx: Context): void {
    if (this.error === undefined && this.generic !== undefined) ctx.report(this.generic, true);
    else super.reportKind(value, ctx);
  }
}
