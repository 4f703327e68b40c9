import { badRequest } from "./fake-http-error.js";

/** The column types the fake knows. They govern filter parsing and comparison and `@sort` order only. */
export const columnTypes = ["text", "int4", "int8", "float8", "boolean", "timestamptz", "jsonb"] as const;

/** A column type of the fake. */
export type ColumnType = (typeof columnTypes)[number];

/** A filter value parsed for its column: `matches(stored)` is the SQL `=` on a non-null stored value. */
export type ValueMatcher = (stored: unknown) => boolean;

const integerRanges = {
  int4: [-(2n ** 31n), 2n ** 31n - 1n],
  int8: [-(2n ** 63n), 2n ** 63n - 1n],
} as const;
const integerPattern = /^[+-]?\d+$/;
const floatPattern = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const numberPattern = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;
const timestampPattern =
  /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * Parses a filter value for a column type, or throws 400 when it does not parse.
 *
 * @param type - the column's type
 * @param text - the percent-decoded filter value
 * @param column - the column name, for the error message
 */
export function parseFilterValue(type: ColumnType, text: string, column: string): ValueMatcher {
  const invalid = () => badRequest(`Invalid ${type} value ${JSON.stringify(text)} for column ${column}.`);
  switch (type) {
    case "text":
      return (stored) => matchesText(stored, text);
    case "int4":
    case "int8": {
      if (!integerPattern.test(text)) throw invalid();
      const value = BigInt(text);
      const [min, max] = integerRanges[type];
      if (value < min || value > max) return () => false;
      return (stored) => typeof stored === "number" && Number.isInteger(stored) && BigInt(stored) === value;
    }
    case "float8": {
      if (!floatPattern.test(text)) throw invalid();
      const value = Number(text);
      return (stored) => typeof stored === "number" && stored === value;
    }
    case "boolean": {
      const lower = text.toLowerCase();
      if (!["true", "false", "1", "0"].includes(lower)) throw invalid();
      const value = lower === "true" || lower === "1";
      return (stored) => stored === value;
    }
    case "timestamptz": {
      const instant = parseTimestamp(text);
      if (instant === undefined) throw invalid();
      return (stored) => typeof stored === "string" && parseTimestamp(stored) === instant;
    }
    case "jsonb": {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw invalid();
      }
      const canonical = canonicalJson(value);
      return (stored) => canonicalJson(stored) === canonical;
    }
  }
}

function matchesText(stored: unknown, text: string): boolean {
  if (typeof stored === "string") return stored === text;
  if (typeof stored === "number") return numberPattern.test(text) && Number(text) === stored;
  if (typeof stored === "boolean") return text === String(stored);
  return false;
}

/**
 * The instant of an ISO 8601 date or date-time (`T` or space, optional `Z`/`±hh[:mm]`, UTC without one), in
 * ms since the epoch, or `undefined`.
 */
function parseTimestamp(text: string): number | undefined {
  const match = timestampPattern.exec(text);
  if (!match) return undefined;
  const [, date, time = "00:00:00", zone = "Z"] = match;
  let offset = zone.toUpperCase();
  if (offset !== "Z") {
    const digits = offset.slice(1).replace(":", "");
    offset = `${offset[0]}${digits.slice(0, 2)}:${digits.slice(2, 4).padEnd(2, "0")}`;
  }
  const instant = Date.parse(`${date}T${time}${offset}`);
  return Number.isNaN(instant) ? undefined : instant;
}

/** JSON text with object members sorted, so equal JSON values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    return Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

/**
 * Compares two non-null values for `@sort` ascending: on `timestamptz` columns parseable instants first (by
 * instant); otherwise booleans (false first), then numbers, then strings (UTF-16 code units), then other
 * values by their JSON text.
 */
export function compareValues(type: ColumnType, a: unknown, b: unknown): number {
  if (type === "timestamptz") {
    const ia = typeof a === "string" ? parseTimestamp(a) : undefined;
    const ib = typeof b === "string" ? parseTimestamp(b) : undefined;
    if (ia !== undefined && ib !== undefined) return ia - ib;
    if (ia !== undefined) return -1;
    if (ib !== undefined) return 1;
  }
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return Number(a) - Number(b);
  if (ra === 1) return (a as number) - (b as number);
  const sa = ra === 2 ? (a as string) : canonicalJson(a);
  const sb = rb === 2 ? (b as string) : canonicalJson(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function rank(value: unknown): number {
  if (typeof value === "boolean") return 0;
  if (typeof value === "number") return 1;
  if (typeof value === "string") return 2;
  return 3;
}
