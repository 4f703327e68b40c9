import { badRequest, conflict } from "./fake-http-error.js";
import { type FakeTable, isSystemColumn, type RidAllocator, type Row } from "./fake-table.js";
import type { ProjectedColumn } from "./request-path.js";

/** What a write needs besides the table and body: RIDs and the timestamp of this request. */
export interface WriteContext {
  rids: RidAllocator;
  now: string;
}

const asObject = (item: unknown): Row =>
  item !== null && typeof item === "object" && !Array.isArray(item) ? (item as Row) : {};

/**
 * Attributegroup PUT: each item updates the target columns of the stored rows whose key columns match its
 * keys. Unmatched items are skipped. Columns may be renamed in the body (`name:=column`), so one column can be
 * both a key (its expected value) and a target (its new value): a conditional update. Answers the updated
 * rows' keys (as matched) and targets (as written), under their body names, in prior row order.
 */
export function attributegroupPut(
  table: FakeTable,
  keys: ProjectedColumn[],
  targets: ProjectedColumn[],
  body: unknown[],
  context: WriteContext,
): Row[] {
  const items = body.map(asObject);
  for (const item of items) requireNotNullNamed(table, item, [...keys, ...targets]);
  const keyColumns = keys.map(({ column }) => column);
  const byKey = new Map<string, { key: Row; item: Row }>();
  for (const item of items) {
    const key = renamed(item, keys);
    const text = table.keyOf(key, keyColumns);
    if (byKey.has(text) && keyColumns.every((column) => (key[column] ?? null) !== null))
      throw badRequest("Multiple input rows share the same key information.");
    byKey.set(text, { key, item });
  }
  type Entry = { key: Row; item: Row };
  const matches: Array<[stored: Row, entry: Entry]> = [];
  if (keyColumns.includes("RID")) {
    for (const entry of byKey.values()) {
      const stored = table.byRid(entry.key.RID);
      if (stored && table.keyOf(stored, keyColumns) === table.keyOf(entry.key, keyColumns))
        matches.push([stored, entry]);
    }
  } else if (
    keyColumns.length === 1 &&
    [...byKey.values()].every((entry) => isScalar(entry.key[keyColumns[0] as string]))
  ) {
    // One scalar key column: compare values directly instead of building a key text per stored row.
    const column = keyColumns[0] as string;
    const byValue = new Map([...byKey.values()].map((entry) => [entry.key[column] ?? null, entry]));
    for (const stored of table.rows()) {
      const value = stored[column] ?? null;
      const entry = isScalar(value) ? byValue.get(value) : undefined;
      if (entry) matches.push([stored, entry]);
    }
  } else {
    for (const stored of table.rows()) {
      const entry = byKey.get(table.keyOf(stored, keyColumns));
      if (entry) matches.push([stored, entry]);
    }
  }
  if (matches.length > 1) {
    const order = rowOrder(table);
    matches.sort(([a], [b]) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  }
  const updated = matches.map(([stored, { item }]) => {
    const row: Row = { ...stored, RMT: context.now };
    for (const { name, column } of targets) row[column] = structuredClone(item[name] ?? null);
    return { stored, row };
  });
  if (targets.some(({ column }) => table.clientKey.includes(column)))
    requireUniqueAfter(
      table,
      updated.map(({ row }) => row),
    );
  for (const { row } of updated) table.rewrite(row);
  return updated.map(({ stored, row }) => {
    const out: Row = {};
    for (const { name, column } of keys) out[name] = structuredClone(stored[column] ?? null);
    for (const { name, column } of targets) out[name] = structuredClone(row[column] ?? null);
    return out;
  });
}

/** Entity POST: inserts rows; any key fault fails the whole request. Answers full rows in input order. */
export function entityPost(table: FakeTable, body: unknown[], context: WriteContext): Row[] {
  const items = body.map((item) => withoutSystemColumns(asObject(item)));
  for (const item of items) requireNotNull(table, item, table.clientKey);
  requireDistinctInput(table, items, "Multiple input rows share the same unique key information.");
  if (table.clientKey.length > 0) {
    const stored = new Set([...table.rows()].map((row) => table.keyOf(row, table.clientKey)));
    for (const item of items) {
      if (stored.has(table.keyOf(item, table.clientKey)))
        throw conflict(`A row with key ${table.keyOf(item, table.clientKey)} already exists.`);
    }
  }
  return items.map((item) => insert(table, item, context));
}

/**
 * Entity PUT: upserts rows correlated on the client key. A matched row is replaced (other columns `null`
 * unless given). Answers the updated rows without system columns, then the inserted full rows.
 */
export function entityPut(table: FakeTable, body: unknown[], context: WriteContext): Row[] {
  if (table.clientKey.length === 0)
    throw conflict(`Table ${table.qualifiedName} has no client key to correlate rows on.`);
  const items = body.map((item) => withoutSystemColumns(asObject(item)));
  for (const item of items) requireNotNull(table, item, table.clientKey);
  requireDistinctInput(table, items, "Multiple input rows share the same unique key information.");
  const byKey = new Map(items.map((item) => [table.keyOf(item, table.clientKey), item]));
  const replaced: Row[] = [];
  const matched = new Set<Row>();
  for (const stored of table.rows()) {
    const item = byKey.get(table.keyOf(stored, table.clientKey));
    if (!item) continue;
    matched.add(item);
    const row: Row = { RID: stored.RID, RCT: stored.RCT, RMT: context.now, RCB: null, RMB: null };
    for (const column of new Set([...table.dataColumns(), ...Object.keys(item)]))
      row[column] = structuredClone(item[column] ?? null);
    replaced.push(row);
  }
  for (const row of replaced) table.rewrite(row);
  const updatedOut = replaced.map((row) => table.pick(row, table.dataColumns()));
  const inserted = items.filter((item) => !matched.has(item)).map((item) => insert(table, item, context));
  return [...updatedOut, ...inserted];
}

/** DELETE: removes the rows the filter keeps; 404 when there are none. */
export function entityDelete(table: FakeTable, keep: (row: Row) => boolean): number {
  const doomed = [...table.rows()].filter(keep);
  for (const row of doomed) table.remove(row);
  return doomed.length;
}

function insert(table: FakeTable, item: Row, context: WriteContext): Row {
  const row: Row = {
    ...structuredClone(item),
    RID: context.rids.allocate(),
    RCT: context.now,
    RMT: context.now,
  };
  row.RCB = null;
  row.RMB = null;
  table.append(row);
  return table.full(row);
}

/** The item's values under their stored column names. */
function renamed(item: Row, columns: ProjectedColumn[]): Row {
  const out: Row = {};
  for (const { name, column } of columns) out[column] = item[name] ?? null;
  return out;
}

function requireNotNullNamed(table: FakeTable, item: Row, columns: ProjectedColumn[]): void {
  for (const { name, column } of columns) {
    if (table.isNotNull(column) && (item[name] ?? null) === null)
      throw conflict(`Column ${JSON.stringify(column)} of table ${table.qualifiedName} cannot be null.`);
  }
}

function isScalar(value: unknown): boolean {
  return value === null || value === undefined || typeof value !== "object";
}

function withoutSystemColumns(item: Row): Row {
  return Object.fromEntries(Object.entries(item).filter(([column]) => !isSystemColumn(column)));
}

function requireNotNull(table: FakeTable, item: Row, columns: readonly string[]): void {
  for (const column of columns) {
    if (table.isNotNull(column) && (item[column] ?? null) === null)
      throw conflict(`Column ${JSON.stringify(column)} of table ${table.qualifiedName} cannot be null.`);
  }
}

function requireDistinctInput(table: FakeTable, items: Row[], message: string): void {
  if (table.clientKey.length === 0) return;
  const seen = new Set<string>();
  for (const item of items) {
    const key = table.keyOf(item, table.clientKey);
    if (seen.has(key)) throw badRequest(message);
    seen.add(key);
  }
}

/** 409 when updating these rows would give two rows the same client key. */
function requireUniqueAfter(table: FakeTable, updated: Row[]): void {
  const replacements = new Map(updated.map((row) => [row.RID, row]));
  const seen = new Set<string>();
  for (const stored of table.rows()) {
    const key = table.keyOf(replacements.get(stored.RID) ?? stored, table.clientKey);
    if (seen.has(key)) throw conflict(`Duplicate key ${key} in table ${table.qualifiedName}.`);
    seen.add(key);
  }
}

function rowOrder(table: FakeTable): Map<Row, number> {
  const order = new Map<Row, number>();
  let index = 0;
  for (const row of table.rows()) order.set(row, index++);
  return order;
}
