import type { Row } from "./polling-catalog.js";

/**
 * The body names of the key columns of an attributegroup update path: `/attributegroup/S:Job/RID,expected:=state;state`
 * has the keys `RID` and `expected` (a renamed column, `name:=column`, is read from `name` in the body).
 * `undefined` when the path has no `;` projection.
 *
 * @param updatePath - an attributegroup path, its names percent-encoded
 */
export function keyNames(updatePath: string): string[] | undefined {
  const path = updatePath.split("?")[0] ?? "";
  const projection = path.slice(path.lastIndexOf("/") + 1);
  const semicolon = projection.indexOf(";");
  if (semicolon <= 0) return undefined;
  try {
    return projection
      .slice(0, semicolon)
      .split(",")
      .map((item) => decodeURIComponent(item.includes(":=") ? item.slice(0, item.indexOf(":=")) : item));
  } catch {
    return undefined;
  }
}

/**
 * The pairs whose update the server applied: those whose key values equal a row of the PUT's answer (ERMrest
 * answers one object per updated row, with the keys as matched). In the order of `pairs`.
 *
 * @param answer - the PUT's response body, parsed
 * @param pairs - the `[candidate, update]` pairs that were PUT
 * @param keys - {@link keyNames} of the update path
 */
export function appliedPairs(answer: unknown, pairs: Array<[Row, Row]>, keys: string[]): Array<[Row, Row]> {
  if (!Array.isArray(answer)) return [];
  const keyText = (row: unknown) => JSON.stringify(keys.map((key) => (row as Row | null)?.[key] ?? null));
  const applied = new Set(answer.map(keyText));
  return pairs.filter(([, update]) => applied.has(keyText(update)));
}
