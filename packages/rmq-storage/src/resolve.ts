import { bytesKey } from "./bytes.js";
import type { DirectoryData, Path, RelationData, RevisionData, Sha1, Timestamp } from "./types.js";

/*
 * Conflict resolution: how a worker merges the items of several messages into one storage call. Pure
 * functions; inputs are never mutated; output keys in first-seen order.
 */

const earliest = (a: Timestamp | null, b: Timestamp | null): Timestamp | null =>
  a === null ? b : b === null ? a : b < a ? b : a;

/** The earliest date per id. */
export function resolveDates(items: Iterable<readonly [Sha1, Timestamp]>): Map<Sha1, Timestamp> {
  const out = new Map<Sha1, Timestamp>();
  for (const [id, date] of items) {
    const known = out.get(id);
    if (known === undefined || date < known) out.set(id, date);
  }
  return out;
}

/** The earliest non-null date per id, with `flat` OR-ed. */
export function resolveDirectory(items: Iterable<readonly [Sha1, DirectoryData]>): Map<Sha1, DirectoryData> {
  const out = new Map<Sha1, DirectoryData>();
  for (const [id, { date, flat }] of items) {
    const known = out.get(id);
    out.set(
      id,
      known === undefined ? { date, flat } : { date: earliest(known.date, date), flat: known.flat || flat },
    );
  }
  return out;
}

/** The earliest non-null date and the last non-null origin per id; a bare `[id]` counts as both `null`. */
export function resolveRevision(
  items: Iterable<readonly [Sha1] | readonly [Sha1, RevisionData]>,
): Map<Sha1, RevisionData> {
  const out = new Map<Sha1, RevisionData>();
  for (const item of items) {
    const id = item[0];
    const { date, origin } = item[1] ?? { date: null, origin: null };
    const known = out.get(id);
    out.set(
      id,
      known === undefined
        ? { date, origin }
        : { date: earliest(known.date, date), origin: origin ?? known.origin },
    );
  }
  return out;
}

/** Rows grouped by source, distinct by (destination, path bytes). */
export function resolveRelation(
  items: Iterable<readonly [Sha1, Sha1, Path | null]>,
): Map<Sha1, RelationData[]> {
  const out = new Map<Sha1, RelationData[]>();
  const seen = new Set<string>();
  for (const [src, dst, path] of items) {
    const key = `${src}${dst}${bytesKey(path)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const list = out.get(src);
    if (list === undefined) out.set(src, [{ dst, path }]);
    else list.push({ dst, path });
  }
  return out;
}
