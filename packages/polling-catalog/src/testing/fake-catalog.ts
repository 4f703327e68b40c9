import type { IncomingHttpHeaders } from "node:http";
import { type ColumnType, compareValues } from "./column-types.js";
import { badRequest, conflict, FakeHttpError, notImplemented } from "./fake-http-error.js";
import { FakeTable, isSystemColumn, RidAllocator, type Row } from "./fake-table.js";
import { compileFilter, filterColumns } from "./filter.js";
import { etagFor, preconditionFails } from "./preconditions.js";
import { parseRequestPath, type RequestPath } from "./request-path.js";
import { attributegroupPut, entityDelete, entityPost, entityPut, type WriteContext } from "./writes.js";

/** One table of {@link FakeCatalog}'s definition, already validated. */
export interface TableDefinition {
  key: string[];
  rows: Row[];
  columns: string[];
  types: Record<string, ColumnType>;
}

/** A request as the catalog sees it: method, raw URL, lower-cased headers, whole body. */
export interface FakeRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The catalog's answer; `wrote` is true when a write succeeded (the version moved). */
export interface FakeReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  wrote: boolean;
}

const textPlain = "text/plain; charset=utf-8";

/**
 * The protocol core of the fake ERMrest: tables, the catalog-wide version, and the handling of one request
 * from parsed URL to reply. No I/O: the HTTP server and notices live in `fake-ermrest.ts`.
 */
export class FakeCatalog {
  readonly #tables = new Map<string, FakeTable>();
  readonly #rids = new RidAllocator();
  #version = 1;

  /**
   * @param tables - `schema:table` → definition; initial rows are copied
   * @throws Error on a repeated key, a null client key or a repeated RID in the initial rows
   */
  constructor(tables: Record<string, TableDefinition>) {
    const now = new Date().toISOString();
    for (const [name, definition] of Object.entries(tables)) {
      definition.rows.forEach((initial, index) => {
        if (typeof initial.RID === "string" && initial.RID !== "" && !this.#rids.claim(initial.RID))
          throw new Error(`${rowName(name, index)} repeats the RID ${initial.RID}`);
      });
    }
    for (const [name, definition] of Object.entries(tables)) {
      const table = new FakeTable(name, definition.key, definition.columns, definition.types);
      const seen = new Set<string>();
      definition.rows.forEach((initial, index) => {
        for (const column of table.clientKey) {
          if ((initial[column] ?? null) === null)
            throw new Error(`${rowName(name, index)} has no value for key column ${column}`);
        }
        const key = table.keyOf(initial, table.clientKey);
        if (table.clientKey.length > 0 && seen.has(key))
          throw new Error(`${rowName(name, index)} repeats the key ${key}`);
        seen.add(key);
        const rid =
          typeof initial.RID === "string" && initial.RID !== "" ? initial.RID : this.#rids.allocate();
        table.append({ ...structuredClone(initial), RID: rid, RCT: now, RMT: now, RCB: null, RMB: null });
      });
      this.#tables.set(name, table);
    }
  }

  /** The catalog version: 1, then one more per successful write. */
  get version(): number {
    return this.#version;
  }

  /** Deep copies of a table's rows in row order; throws for an unknown table. */
  rows(name: string): Row[] {
    const table = this.#tables.get(name);
    if (!table)
      throw new Error(
        `unknown table ${JSON.stringify(name)}: expected one of ${[...this.#tables.keys()].join(", ")}`,
      );
    return [...table.rows()].map((row) => table.full(row));
  }

  /**
   * The `"schema:table"` a write request would change, or `undefined` for a read or a request that fails
   * before reaching a table (its answer says why): the unit of ERMrest's write serialization.
   */
  writeTable(request: Pick<FakeRequest, "method" | "url">): string | undefined {
    if (!["PUT", "POST", "DELETE"].includes(request.method)) return undefined;
    try {
      return this.#resolveTable(parseRequestPath(request.url).table).qualifiedName;
    } catch {
      return undefined;
    }
  }

  /** Handles one request completely and synchronously, so each request sees and leaves a consistent catalog. */
  handle(request: FakeRequest): FakeReply {
    try {
      return this.#handle(request);
    } catch (error) {
      if (!(error instanceof FakeHttpError)) throw error;
      return {
        status: error.status,
        headers: { ...error.headers, "Content-Type": textPlain },
        body: `${error.message}\n`,
        wrote: false,
      };
    }
  }

  #handle(request: FakeRequest): FakeReply {
    const { method } = request;
    if (!["GET", "PUT", "POST", "DELETE"].includes(method))
      throw new FakeHttpError(405, `Method ${method} is not allowed.`);
    const path = parseRequestPath(request.url);
    const table = this.#resolveTable(path.table);
    checkShape(method, path);
    table.requireColumns(path.filters.flatMap(filterColumns));
    if (path.projection)
      table.requireColumns([...path.projection.keys, ...path.projection.targets].map(({ column }) => column));

    const accept = request.headers.accept;
    const etag = etagFor(accept, this.#version);
    if (preconditionFails(header(request, "if-match"), header(request, "if-none-match"), etag)) {
      if (method === "GET")
        return { status: 304, headers: { ETag: etag, Vary: "accept" }, body: "", wrote: false };
      throw new FakeHttpError(412, "Resource state does not match requested preconditions.", {
        ETag: etag,
        Vary: "accept",
      });
    }
    if (path.limit !== undefined && path.limit < 0) throw conflict(`Invalid negative limit ${path.limit}.`);
    const keep = path.filters.map((filter) => compileFilter(filter, (column) => table.typeOf(column)));
    const matches = (row: Row) => keep.every((test) => test(row));
    if (path.sort) table.requireColumns(path.sort.map(({ column }) => column));

    if (method === "GET") return this.#json(200, this.#select(table, path, matches), accept, false);
    if (method === "DELETE") {
      if (entityDelete(table, matches) === 0) throw new FakeHttpError(404, "No rows matched the DELETE.");
      this.#version++;
      return {
        status: 204,
        headers: { ETag: etagFor(accept, this.#version), Vary: "accept" },
        body: "",
        wrote: true,
      };
    }
    const body = parseBody(request);
    const context: WriteContext = { rids: this.#rids, now: new Date().toISOString() };
    let out: Row[];
    if (path.projection)
      out = attributegroupPut(table, path.projection.keys, path.projection.targets, body, context);
    else if (method === "POST") out = entityPost(table, body, context);
    else out = entityPut(table, body, context);
    this.#version++;
    return this.#json(200, out, accept, true);
  }

  #json(status: number, rows: Row[], accept: string | undefined, wrote: boolean): FakeReply {
    return {
      status,
      headers: { "Content-Type": "application/json", ETag: etagFor(accept, this.#version), Vary: "accept" },
      body: JSON.stringify(rows),
      wrote,
    };
  }

  #select(table: FakeTable, path: RequestPath, matches: (row: Row) => boolean): Row[] {
    const limit = path.limit ?? Number.POSITIVE_INFINITY;
    const found: Row[] = [];
    for (const row of table.rows()) {
      if (!path.sort && found.length >= limit) break;
      if (matches(row)) found.push(row);
    }
    if (path.sort) {
      const sort = path.sort;
      found.sort((a, b) => {
        for (const { column, descending } of sort) {
          const order = compareNullable(table.typeOf(column), a[column] ?? null, b[column] ?? null);
          if (order !== 0) return descending ? -order : order;
        }
        return 0;
      });
    }
    return found.slice(0, limit).map((row) => table.full(row));
  }

  #resolveTable(ref: RequestPath["table"]): FakeTable {
    if (ref.schema !== undefined) {
      const table = this.#tables.get(`${ref.schema}:${ref.name}`);
      if (table) return table;
    } else {
      const candidates = [...this.#tables.entries()].filter(
        ([name]) => name.slice(name.indexOf(":") + 1) === ref.name,
      );
      if (candidates.length === 1 && candidates[0]) return candidates[0][1];
      if (candidates.length > 1) throw conflict(`Table name ${JSON.stringify(ref.name)} is ambiguous.`);
    }
    const shown = ref.schema === undefined ? ref.name : `${ref.schema}:${ref.name}`;
    throw conflict(`Table ${JSON.stringify(shown)} does not exist.`);
  }
}

/** Method and API combinations, checked while the URL is parsed (before preconditions). */
function checkShape(method: string, path: RequestPath): void {
  if (path.api === "attributegroup") {
    if (method === "GET") throw notImplemented("GET on the attributegroup API");
    if (method !== "PUT") throw notImplemented(`${method} on the attributegroup API`);
  }
  if (path.sort && !(path.api === "entity" && method === "GET"))
    throw notImplemented("@sort on anything but an entity GET");
  if ((method === "PUT" || method === "POST") && path.filters.length > 0)
    throw badRequest(`Filters are not allowed on ${path.api} ${method}.`);
  const targets = path.projection?.targets;
  if (targets && targets.length === 0)
    throw badRequest("An attributegroup PUT needs target columns after ';'.");
  const system = targets?.map(({ column }) => column).find(isSystemColumn);
  if (system) throw conflict(`System column ${system} cannot be updated.`);
}

function parseBody(request: FakeRequest): unknown[] {
  const type = request.headers["content-type"]?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json")
    throw new FakeHttpError(
      415,
      `Unsupported request Content-Type ${JSON.stringify(type ?? "")}; the fake accepts application/json only.`,
    );
  let body: unknown;
  try {
    body = JSON.parse(request.body);
  } catch {
    throw badRequest("The request body is not JSON.");
  }
  if (!Array.isArray(body)) throw badRequest("The request body is not a JSON array.");
  return body;
}

function header(request: FakeRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

function compareNullable(type: ColumnType, a: unknown, b: unknown): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return compareValues(type, a, b);
}

function rowName(table: string, index: number): string {
  return `tables[${JSON.stringify(table)}].rows[${index}]`;
}
