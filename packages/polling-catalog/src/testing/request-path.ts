import { badRequest, FakeHttpError, notImplemented } from "./fake-http-error.js";
import { decode, type Filter, parseFilter } from "./filter.js";

/** The catalog prefix every data URL starts with. */
const catalogPrefix = "/ermrest/catalog/1/";

/** A parsed data URL of the fake. Columns and the table are not resolved yet. */
export interface RequestPath {
  api: "entity" | "attributegroup";
  /** The table as written: `schema` is absent for a bare `T`. */
  table: { schema?: string; name: string };
  filters: Filter[];
  /** Attributegroup key and target columns, each with the name its value has in the body. */
  projection?: { keys: ProjectedColumn[]; targets: ProjectedColumn[] };
  sort?: Array<{ column: string; descending: boolean }>;
  /** `undefined` for no limit; may be negative (a 409 found later, as ERMrest does). */
  limit?: number;
}

/** A column of an attributegroup projection: `column`, or `name:=column` to read it from `name` in the body. */
export interface ProjectedColumn {
  /** The property of each body item that holds the value. */
  name: string;
  /** The stored column. */
  column: string;
}

const unimplementedApis = new Set(["attribute", "aggregate", "entity_rid", "textfacet", "schema", "history"]);

/**
 * Parses the raw request URL (path and query, still percent-encoded). Throws 404 outside the catalog, 400 on
 * a syntax error and 501 on an API or syntax the fake does not implement.
 */
export function parseRequestPath(rawUrl: string): RequestPath {
  const question = rawUrl.indexOf("?");
  const path = question === -1 ? rawUrl : rawUrl.slice(0, question);
  const query = question === -1 ? "" : rawUrl.slice(question + 1);
  if (!path.startsWith(catalogPrefix)) throw new FakeHttpError(404, `No such resource: ${path}`);
  const elements = path.slice(catalogPrefix.length).split("/");
  const api = elements.shift() ?? "";
  if (unimplementedApis.has(api)) throw notImplemented(`the ${api} API`);
  if (api !== "entity" && api !== "attributegroup") throw badRequest(`Unknown API ${JSON.stringify(api)}.`);
  const sort = takeModifiers(elements);
  const tableElement = elements.shift();
  if (tableElement === undefined || tableElement === "") throw badRequest("Missing table name.");
  const result: RequestPath = { api, table: parseTable(tableElement), filters: [] };
  if (api === "attributegroup") {
    const projection = elements.pop();
    if (projection === undefined) throw badRequest("Missing attributegroup columns.");
    result.projection = parseProjection(projection);
  }
  result.filters = elements.map(parseFilterElement);
  if (sort) result.sort = sort;
  const limit = parseLimit(query);
  if (limit !== undefined) result.limit = limit;
  return result;
}

/** Removes `@sort(…)` and other modifiers from the last element; returns the sort list. */
function takeModifiers(elements: string[]): RequestPath["sort"] {
  const last = elements.length - 1;
  const element = elements[last] ?? "";
  const at = element.indexOf("@");
  if (at === -1) return undefined;
  elements[last] = element.slice(0, at);
  let rest = element.slice(at);
  let sort: RequestPath["sort"];
  while (rest !== "") {
    const match = /^@([A-Za-z_]+)\(([^()]*)\)/.exec(rest);
    if (!match) throw badRequest(`Malformed modifier ${JSON.stringify(rest)}.`);
    const [whole, name, args = ""] = match;
    if (name === "before" || name === "after") throw notImplemented(`@${name} paging`);
    if (name !== "sort" || sort) throw badRequest(`Unexpected modifier @${name}.`);
    sort = parseSort(args);
    rest = rest.slice(whole.length);
  }
  return sort;
}

function parseSort(args: string): NonNullable<RequestPath["sort"]> {
  if (args === "") throw badRequest("Empty @sort list.");
  return args.split(",").map((item) => {
    const match = /^([^:]+)(::desc::)?$/.exec(item);
    if (!match?.[1]) throw badRequest(`Malformed @sort item ${JSON.stringify(item)}.`);
    return { column: decode(match[1]), descending: match[2] !== undefined };
  });
}

function parseTable(element: string): RequestPath["table"] {
  if (element.includes(":=") || element.startsWith("$")) throw notImplemented("table aliases");
  const parts = element.split(":");
  if (parts.length > 2 || parts.some((part) => part === ""))
    throw badRequest(`Malformed table name ${JSON.stringify(element)}.`);
  const [first = "", second] = parts.map(decode);
  return second === undefined ? { name: first } : { schema: first, name: second };
}

function parseFilterElement(element: string): Filter {
  if (element === "") throw badRequest("Empty path element.");
  if (element.startsWith("$") || element.includes(":=")) throw notImplemented("aliases");
  if (/\)=\(/.test(element) || (!element.includes("=") && !element.includes("::")))
    throw notImplemented("joins");
  return parseFilter(element);
}

function parseProjection(element: string): NonNullable<RequestPath["projection"]> {
  const groups = element.split(";");
  if (groups.length > 2) throw badRequest(`Malformed attributegroup columns ${JSON.stringify(element)}.`);
  const [keys = "", targets] = groups;
  const malformed = () => badRequest(`Malformed attributegroup columns ${JSON.stringify(element)}.`);
  const names = (list: string): ProjectedColumn[] =>
    list.split(",").map((raw) => {
      const parts = raw.split(":=");
      if (parts.length > 2 || parts.some((part) => part === "")) throw malformed();
      if (parts[parts.length - 1]?.includes(":")) throw notImplemented("qualified column names");
      const [first = "", second] = parts.map(decode);
      return second === undefined ? { name: first, column: first } : { name: first, column: second };
    });
  const projection = { keys: names(keys), targets: targets === undefined ? [] : names(targets) };
  const seen = new Set<string>();
  for (const { name } of [...projection.keys, ...projection.targets]) {
    if (seen.has(name)) throw badRequest(`Attributegroup column name ${JSON.stringify(name)} is used twice.`);
    seen.add(name);
  }
  return projection;
}

function parseLimit(query: string): number | undefined {
  let limit: number | undefined;
  for (const parameter of query === "" ? [] : query.split("&")) {
    const equals = parameter.indexOf("=");
    const name = decode(equals === -1 ? parameter : parameter.slice(0, equals));
    if (name !== "limit") continue;
    const value = equals === -1 ? "" : decode(parameter.slice(equals + 1));
    if (value === "" || value === "none") limit = undefined;
    else if (/^-?\d+$/.test(value)) limit = Number(value);
    else throw badRequest(`Invalid limit ${JSON.stringify(value)}.`);
  }
  return limit;
}
