import { bytesKey, compareBytes, compareNullableBytes } from "./bytes.js";
import {
  checkDirectoryData,
  checkIterable,
  checkMap,
  checkPath,
  checkRelationData,
  checkRevisionData,
  checkSha1,
  checkTimestamp,
  checkUrl,
  relationEntities,
} from "./input.js";
import type {
  DirectoryData,
  EntityType,
  Path,
  RelationType,
  RevisionData,
  Sha1,
  Timestamp,
} from "./types.js";

/*
 * The direct storages validate a whole write into rows sorted by id (relations by source, destination, path)
 * before they touch the database: all or nothing, and concurrent writers always lock in the same order.
 */

const byId = <T extends readonly [Sha1, ...unknown[]]>(a: T, b: T) =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;

function mapRows<V>(
  method: string,
  data: unknown,
  check: (method: string, value: unknown) => V,
): Array<[Sha1, V]> {
  const rows: Array<[Sha1, V]> = [];
  for (const [id, value] of checkMap(method, data)) rows.push([checkSha1(method, id), check(method, value)]);
  return rows.sort(byId);
}

/** `contentAdd` rows. */
export function contentRows(data: unknown): Array<[Sha1, Timestamp]> {
  return mapRows("contentAdd", data, checkTimestamp);
}

/** `directoryAdd` rows. */
export function directoryRows(data: unknown): Array<[Sha1, DirectoryData]> {
  return mapRows("directoryAdd", data, checkDirectoryData);
}

/** `originAdd` rows. */
export function originRows(data: unknown): Array<[Sha1, string]> {
  return mapRows("originAdd", data, checkUrl);
}

/** `revisionAdd` rows: with data for a `Map`, `null` data for bare ids (distinct). */
export function revisionRows(data: unknown): Array<[Sha1, RevisionData | null]> {
  if (data instanceof Map) return mapRows("revisionAdd", data, checkRevisionData);
  const ids = new Set<Sha1>();
  for (const id of checkIterable("revisionAdd", data)) ids.add(checkSha1("revisionAdd", id));
  return [...ids].sort().map((id) => [id, null]);
}

/** `locationAdd` rows: distinct paths in byte order. */
export function locationRows(data: unknown, method = "locationAdd"): Path[] {
  const paths = new Map<string, Path>();
  for (const path of checkIterable(method, data)) {
    const checked = checkPath(method, path);
    paths.set(bytesKey(checked), checked);
  }
  return [...paths.values()].sort(compareBytes);
}

/** A validated `relationAdd`: its rows and everything the rows refer to, each distinct and sorted. */
export interface RelationRows {
  relation: RelationType;
  src: EntityType;
  dst: EntityType;
  srcIds: Sha1[];
  dstIds: Sha1[];
  paths: Path[];
  rows: Array<[Sha1, Sha1, Path | null]>;
}

/** `relationAdd` rows. */
export function relationRows(relation: RelationType, data: unknown): RelationRows {
  const method = "relationAdd";
  const rows = new Map<string, [Sha1, Sha1, Path | null]>();
  for (const [src, values] of checkMap(method, data)) {
    checkSha1(method, src);
    for (const value of checkIterable(method, values)) {
      const { dst, path } = checkRelationData(method, relation, value);
      rows.set(`${src}${dst}${bytesKey(path)}`, [src as Sha1, dst, path]);
    }
  }
  const sorted = [...rows.values()].sort((a, b) =>
    a[0] < b[0]
      ? -1
      : a[0] > b[0]
        ? 1
        : a[1] < b[1]
          ? -1
          : a[1] > b[1]
            ? 1
            : compareNullableBytes(a[2], b[2]),
  );
  const [srcEntity, dstEntity] = relationEntities(relation);
  const paths = sorted.flatMap((row) => (row[2] === null ? [] : [row[2]]));
  return {
    relation,
    src: srcEntity,
    dst: dstEntity,
    srcIds: [...new Set(sorted.map((row) => row[0]))].sort(),
    dstIds: [...new Set(sorted.map((row) => row[1]))].sort(),
    paths: locationRows(paths, method),
    rows: sorted,
  };
}
