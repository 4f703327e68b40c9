import { inspect } from "node:util";

/**
 * `<label>(<name>) <value>` for `toString()`: the value inspected on one line, never throwing (a bigint,
 * a cycle or a hostile proxy in a state included).
 */
export function describeObject(label: string, name: string, value: () => unknown): string {
  const head = `${label}(${name})`;
  try {
    const options = {
      depth: 3,
      compact: true,
      breakLength: Number.POSITIVE_INFINITY,
      maxArrayLength: 10,
      maxStringLength: 200,
    };
    return `${head} ${inspect(value(), options)}`;
  } catch {
    return head;
  }
}
