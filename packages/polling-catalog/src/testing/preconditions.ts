/** The role hash ERMrest puts first in its ETags: base64 of md5 of `["*"]`. */
export const roleHash = "B+ddN9/bH60bI+dIiMBBtA==";

/**
 * The catalog-wide ETag for a request's `Accept` header at a version. A `"` of the header is written `%22`, so
 * that the ETag stays one quoted string.
 */
export function etagFor(accept: string | undefined, version: number): string {
  return `"${roleHash};${(accept ?? "").replaceAll('"', "%22")};${version}"`;
}

/**
 * Whether the request's `If-Match` / `If-None-Match` fail against the current ETag. Lists are
 * comma-separated (a comma inside a quoted tag is part of it); `W/` prefixes and a `-gzip` suffix inside the quotes are ignored; `*` matches anything.
 */
export function preconditionFails(
  ifMatch: string | undefined,
  ifNoneMatch: string | undefined,
  current: string,
): boolean {
  if (ifMatch !== undefined && !listMatches(ifMatch, current)) return true;
  return ifNoneMatch !== undefined && listMatches(ifNoneMatch, current);
}

function listMatches(list: string, current: string): boolean {
  return splitList(list).some((raw) => {
    const tag = normalize(raw);
    return tag === "*" || tag === current;
  });
}

function normalize(raw: string): string {
  let tag = raw.trim();
  if (tag.startsWith("W/")) tag = tag.slice(2);
  if (tag.endsWith('-gzip"')) tag = `${tag.slice(0, -'-gzip"'.length)}"`;
  return tag;
}

/** A header list split at its commas, except those inside a quoted entity-tag (`"…;text/html, application/json;1"`). */
function splitList(list: string): string[] {
  const items: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    if (list[i] === '"') quoted = !quoted;
    else if (list[i] === "," && !quoted) {
      items.push(list.slice(start, i));
      start = i + 1;
    }
  }
  items.push(list.slice(start));
  return items;
}
