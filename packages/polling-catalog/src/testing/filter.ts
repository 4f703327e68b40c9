import { type ColumnType, parseFilterValue } from "./column-types.js";
import { badRequest, notImplemented } from "./fake-http-error.js";

/** A parsed filter path element: predicates combined with `&`, `;`, `!` and parentheses. */
export type Filter =
  | { kind: "and" | "or"; items: Filter[] }
  | { kind: "not"; item: Filter }
  | { kind: "eq"; column: string; value: string }
  | { kind: "null"; column: string };

/** Three-valued truth: `null` is SQL's unknown. */
type Truth = boolean | null;

const separators = new Set([";", "&", "!", "(", ")", "=", ":"]);

/**
 * Parses one raw (still percent-encoded) filter path element. `&` binds tighter than `;`; `!` negates the
 * next predicate or group. Throws 400 on a syntax error and 501 on an operator other than `=` and `::null::`.
 */
export function parseFilter(element: string): Filter {
  const parser = new FilterParser(element);
  const filter = parser.disjunction();
  if (!parser.done()) throw parser.error();
  return filter;
}

class FilterParser {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  done(): boolean {
    return this.#at >= this.#text.length;
  }

  error(): Error {
    return badRequest(`Filter syntax error at offset ${this.#at} of ${JSON.stringify(this.#text)}.`);
  }

  disjunction(): Filter {
    const items = [this.#conjunction()];
    while (this.#eat(";")) items.push(this.#conjunction());
    return items.length === 1 ? (items[0] as Filter) : { kind: "or", items };
  }

  #conjunction(): Filter {
    const items = [this.#unary()];
    while (this.#eat("&")) items.push(this.#unary());
    return items.length === 1 ? (items[0] as Filter) : { kind: "and", items };
  }

  #unary(): Filter {
    if (this.#eat("!")) return { kind: "not", item: this.#unary() };
    if (this.#eat("(")) {
      const group = this.disjunction();
      if (!this.#eat(")")) throw this.error();
      return group;
    }
    return this.#predicate();
  }

  #predicate(): Filter {
    const column = decode(this.#run());
    if (column === "") throw this.error();
    if (this.#eat("=")) return { kind: "eq", column, value: decode(this.#run()) };
    if (this.#eat("::")) {
      const operator = this.#run();
      if (!this.#eat("::")) throw this.error();
      if (operator !== "null") throw notImplemented(`the filter operator ::${operator}::`);
      if (this.#run() !== "") throw this.error();
      return { kind: "null", column };
    }
    throw this.error();
  }

  #run(): string {
    const start = this.#at;
    while (!this.done() && !separators.has(this.#text[this.#at] as string)) this.#at++;
    return this.#text.slice(start, this.#at);
  }

  #eat(token: string): boolean {
    if (!this.#text.startsWith(token, this.#at)) return false;
    this.#at += token.length;
    return true;
  }
}

/** Percent-decodes a name or value; a malformed escape is a 400. */
export function decode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest(`Malformed percent-encoding in ${JSON.stringify(raw)}.`);
  }
}

/** Every column a filter names. */
export function filterColumns(filter: Filter): string[] {
  switch (filter.kind) {
    case "and":
    case "or":
      return filter.items.flatMap(filterColumns);
    case "not":
      return filterColumns(filter.item);
    default:
      return [filter.column];
  }
}

/**
 * Compiles a filter for a table: a function that is true for the rows to keep. Throws 400 when a value does
 * not parse for its column's type.
 *
 * @param filter - the parsed filter
 * @param typeOf - the type of a column
 */
export function compileFilter(
  filter: Filter,
  typeOf: (column: string) => ColumnType,
): (row: Record<string, unknown>) => boolean {
  const evaluate = compile(filter, typeOf);
  return (row) => evaluate(row) === true;
}

function compile(
  filter: Filter,
  typeOf: (column: string) => ColumnType,
): (row: Record<string, unknown>) => Truth {
  switch (filter.kind) {
    case "and": {
      const items = filter.items.map((item) => compile(item, typeOf));
      return (row) => {
        let result: Truth = true;
        for (const item of items) {
          const value = item(row);
          if (value === false) return false;
          if (value === null) result = null;
        }
        return result;
      };
    }
    case "or": {
      const items = filter.items.map((item) => compile(item, typeOf));
      return (row) => {
        let result: Truth = false;
        for (const item of items) {
          const value = item(row);
          if (value === true) return true;
          if (value === null) result = null;
        }
        return result;
      };
    }
    case "not": {
      const item = compile(filter.item, typeOf);
      return (row) => {
        const value = item(row);
        return value === null ? null : !value;
      };
    }
    case "null": {
      const { column } = filter;
      return (row) => (row[column] ?? null) === null;
    }
    case "eq": {
      const { column } = filter;
      const matches = parseFilterValue(typeOf(column), filter.value, column);
      return (row) => {
        const stored = row[column] ?? null;
        return stored === null ? null : matches(stored);
      };
    }
  }
}
