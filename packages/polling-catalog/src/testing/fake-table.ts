import { type ColumnType, canonicalJson } from "./column-types.js";
import { conflict } from "./fake-http-error.js";

/** A stored or returned row. */
export type Row = Record<string, unknown>;

/** The system columns every row has. */
const systemColumns = ["RID", "RCT", "RMT", "RCB", "RMB"] as const;
const systemColumnSet: ReadonlySet<string> = new Set(systemColumns);
const systemTypes: Record<string, ColumnType> = { RCT: "timestamptz", RMT: "timestamptz" };

/** Whether a column is one of the system columns. */
export const isSystemColumn = (column: string): boolean => systemColumnSet.has(column);

/** Hands out RIDs: unique, never reused, never equal to one given by an initial row. */
export class RidAllocator {
  #next = 1;
  readonly #used = new Set<string>();

  /** Marks a RID brought by an initial row as taken; false if it already was. */
  claim(rid: string): boolean {
    if (this.#used.has(rid)) return false;
    this.#used.add(rid);
    return true;
  }

  /** A fresh RID such as `1-A3`. */
  allocate(): string {
    for (;;) {
      const rid = `1-${(this.#next++).toString(36).toUpperCase()}`;
      if (this.claim(rid)) return rid;
    }
  }
}

/**
 * One table of the fake: rows in the order of their last write (a `Map` keeps it, so moving a row to the end
 * is cheap), columns in first-seen order, types, and the NOT NULL and client key rules.
 */
export class FakeTable {
  /** `schema:table`. */
  readonly qualifiedName: string;
  /** The `key` columns. */
  readonly key: readonly string[];
  /** The `key` columns other than the system columns; empty for a table keyed by RID alone. */
  readonly clientKey: readonly string[];
  readonly #columns = new Set<string>(systemColumns);
  readonly #types: Record<string, ColumnType>;
  readonly #notNull: ReadonlySet<string>;
  readonly #rows = new Map<string, Row>();

  /**
   * @param qualifiedName - `schema:table`
   * @param key - the key columns
   * @param columns - extra declared columns
   * @param types - column types (entries for system columns are ignored)
   */
  constructor(qualifiedName: string, key: string[], columns: string[], types: Record<string, ColumnType>) {
    this.qualifiedName = qualifiedName;
    this.key = key;
    this.clientKey = key.filter((column) => !isSystemColumn(column));
    for (const column of [...key, ...columns, ...Object.keys(types)]) this.#columns.add(column);
    this.#types = { ...types, ...systemTypes };
    for (const column of systemColumns) if (!(column in systemTypes)) delete this.#types[column];
    this.#notNull = new Set([...key, "RID", "RCT", "RMT"]);
  }

  /** Throws 409 unless every name is a column of the table. */
  requireColumns(columns: Iterable<string>): void {
    for (const column of columns) {
      if (!this.#columns.has(column))
        throw conflict(`Column ${JSON.stringify(column)} does not exist in table ${this.qualifiedName}.`);
    }
  }

  /** The type of a column (`text` when undeclared). */
  typeOf(column: string): ColumnType {
    return this.#types[column] ?? "text";
  }

  /** Whether a column rejects `null`. */
  isNotNull(column: string): boolean {
    return this.#notNull.has(column);
  }

  /** Stored rows in row order (live objects: callers must not mutate them). */
  rows(): IterableIterator<Row> {
    return this.#rows.values();
  }

  /** Appends a row and learns its columns. */
  append(row: Row): void {
    for (const column of Object.keys(row)) this.#columns.add(column);
    this.#rows.set(row.RID as string, row);
  }

  /** Replaces a stored row (same RID) and moves it to the end of the row order. */
  rewrite(row: Row): void {
    this.#rows.delete(row.RID as string);
    this.append(row);
  }

  /** Removes a row. */
  remove(row: Row): void {
    this.#rows.delete(row.RID as string);
  }

  /** The row with this RID, if any. */
  byRid(rid: unknown): Row | undefined {
    return typeof rid === "string" ? this.#rows.get(rid) : undefined;
  }

  /** A full copy of a row: every column, `null` where it has no value. */
  full(row: Row): Row {
    const out: Row = {};
    for (const column of this.#columns) out[column] = structuredClone(row[column] ?? null);
    return out;
  }

  /** A copy of a row restricted to some columns, `null` where it has no value. */
  pick(row: Row, columns: Iterable<string>): Row {
    const out: Row = {};
    for (const column of columns) out[column] = structuredClone(row[column] ?? null);
    return out;
  }

  /** Canonical text of a row's values in some columns, for key comparisons (missing counts as `null`). */
  keyOf(row: Row, columns: readonly string[]): string {
    const values = columns.map((column) => row[column] ?? null);
    // Plain JSON is canonical already when no value is an object, and much cheaper.
    return values.every((value) => value === null || typeof value !== "object")
      ? JSON.stringify(values)
      : canonicalJson(values);
  }

  /** All non-system columns, in column order. */
  dataColumns(): string[] {
    return [...this.#columns].filter((column) => !isSystemColumn(column));
  }
}
