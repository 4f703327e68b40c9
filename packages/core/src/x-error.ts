const brand = Symbol.for("@x/core.XError");

/** Options accepted by every {@link XError} constructor. */
export interface XErrorOptions {
  /** The underlying error, kept as the standard `Error.cause`. */
  cause?: unknown;
}

/**
 * The base class of every error thrown by an `@x` package.
 *
 * `code` is stable across versions (for example `ERR_X_SUPERVISOR_BAD_LINE`) and is what programs should test.
 * Use {@link XError.is} rather than `instanceof` when an error may come from another installed copy of
 * `@x/core`: it checks a `Symbol.for` brand that every copy shares.
 *
 * @example
 * ```ts
 * try { await run(); } catch (e) { if (XError.is(e, "ERR_X_GUARD_INVALID_OPTION")) usage(e.message); else throw e; }
 * ```
 */
export class XError extends Error {
  /**
   * The class's name, set explicitly by every subclass (`override name = "GuardError"`), so that a
   * minifier renaming constructors cannot change it.
   */
  override name = "XError";
  /** Stable machine-readable error code, `ERR_X_<PACKAGE>_<WHAT>`. */
  readonly code: string;

  /**
   * @param code - stable machine-readable code, `ERR_X_<PACKAGE>_<WHAT>`
   * @param message - a sentence for people: what went wrong and, where it helps, what to do
   * @param options - `cause`: the underlying error
   */
  constructor(code: string, message: string, options?: XErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    Object.defineProperty(this, brand, { value: true });
  }

  /**
   * Whether `value` is an `XError` from any copy of `@x/core`, optionally with the given code.
   *
   * @param value - anything caught
   * @param code - when given, the error's `code` must also equal it
   */
  static is(value: unknown, code?: string): value is XError {
    if (typeof value !== "object" || value === null) return false;
    if ((value as Record<symbol, unknown>)[brand] !== true) return false;
    return code === undefined || (value as XError).code === code;
  }

  /** A plain object for structured logs: `name`, `code`, `message` and the cause's message. */
  toJSON(): { name: string; code: string; message: string; cause?: string } {
    const json: { name: string; code: string; message: string; cause?: string } = {
      name: this.name,
      code: this.code,
      message: this.message,
    };
    if (this.cause !== undefined)
      json.cause = this.cause instanceof Error ? this.cause.message : String(this.cause);
    return json;
  }
}
