/** How {@link logValue} renders errors. */
export interface LogValueOptions {
  /** Keep each error's `stack`. Default `true`. */
  stack?: boolean;
}

/**
 * A copy of `value` that `JSON.stringify` renders faithfully and never throws on, as a structured logger
 * wants it: an error becomes a plain object with its `name`, `message`, `stack`, its own fields (`code`, …)
 * and its `cause`, recursively (as pino's standard `err` serializer does); a value that contains itself shows
 * `"[Circular]"` where it would repeat; a `bigint` becomes its decimal string; an object with `toJSON()` is
 * replaced by what that returns, and a getter that throws shows as `"[Thrown: <message>]"`.
 *
 * @param value - any field of a log line
 * @param options - see {@link LogValueOptions}
 */
export function logValue(value: unknown, options: LogValueOptions = {}): unknown {
  return copy(value, options.stack ?? true, []);
}

function copy(value: unknown, stack: boolean, ancestors: object[]): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object" || value === null) return value;
  if (ancestors.includes(value)) return "[Circular]";
  ancestors.push(value);
  try {
    if (value instanceof Error) return copyError(value, stack, ancestors);
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return copy(toJSON.call(value), stack, ancestors);
    if (Array.isArray(value)) return value.map((item) => copy(item, stack, ancestors));
    return copyFields(value, {}, stack, ancestors);
  } finally {
    ancestors.pop();
  }
}

function copyError(error: Error, stack: boolean, ancestors: object[]): object {
  const out: Record<string, unknown> = { name: error.name, message: error.message };
  if (stack && error.stack !== undefined) out.stack = error.stack;
  copyFields(error, out, stack, ancestors);
  if (error.cause !== undefined) out.cause = copy(error.cause, stack, ancestors);
  if (error instanceof AggregateError) out.errors = copy(error.errors, stack, ancestors);
  return out;
}

function copyFields(
  from: object,
  to: Record<string, unknown>,
  stack: boolean,
  ancestors: object[],
): Record<string, unknown> {
  for (const key of Object.keys(from)) {
    let field: unknown;
    try {
      field = (from as Record<string, unknown>)[key];
    } catch (error) {
      field = `[Thrown: ${error instanceof Error ? error.message : String(error)}]`;
    }
    if (field === undefined || typeof field === "function" || typeof field === "symbol") continue;
    to[key] = copy(field, stack, ancestors);
  }
  return to;
}
