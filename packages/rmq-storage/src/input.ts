import { badInput } from "./errors.js";
import {
  type DirectoryData,
  EntityType,
  type Path,
  type RelationData,
  RelationType,
  type RevisionData,
  type Sha1,
  type Timestamp,
} from "./types.js";

/**
 * The earliest timestamp accepted: 0001-01-01T00:00:00Z, in µs. Made from a string, not written `-…n`: that is a
 * negation, which the bundler copies into each comparison, and which then allocates a new bigint every time it
 * runs (24 MB of garbage per 1 000 000 checked items).
 */
export const MIN_TIMESTAMP = BigInt("-62135596800000000");
/** The latest timestamp accepted: 9999-12-31T23:59:59.999999Z, in µs. */
export const MAX_TIMESTAMP = 253402300799999999n;

const sha1Pattern = /^[0-9a-f]{40}$/;
const relations = new Set<unknown>(Object.values(RelationType));
const entities = new Set<unknown>(Object.values(EntityType));
const pathRelations = new Set<RelationType>([
  RelationType.CNT_EARLY_IN_REV,
  RelationType.CNT_IN_DIR,
  RelationType.DIR_IN_REV,
]);

/** Whether a relation's rows carry a path (`content_in_revision`, `content_in_directory`, `directory_in_revision`). */
export function relationHasPath(relation: RelationType): boolean {
  return pathRelations.has(relation);
}

/** The source and destination entities of a relation: the first and the last word of its value. */
export function relationEntities(relation: RelationType): [EntityType, EntityType] {
  const words = relation.split("_");
  return [words[0] as EntityType, words[words.length - 1] as EntityType];
}

/** Checks a SHA-1 id. */
export function checkSha1(method: string, value: unknown): Sha1 {
  if (typeof value !== "string" || !sha1Pattern.test(value))
    throw badInput(method, "expected a sha1 of 40 lowercase hex characters, got", value);
  return value;
}

/** Checks a timestamp: a bigint of µs within year 1 … 9999. */
export function checkTimestamp(method: string, value: unknown): Timestamp {
  if (typeof value !== "bigint" || value < MIN_TIMESTAMP || value > MAX_TIMESTAMP)
    throw badInput(method, "expected a bigint timestamp in µs between years 1 and 9999, got", value);
  return value;
}

/** Checks a timestamp or `null`. */
export function checkOptionalTimestamp(method: string, value: unknown): Timestamp | null {
  return value === null ? null : checkTimestamp(method, value);
}

/** Checks a path (a `Uint8Array`, `Buffer` included). */
export function checkPath(method: string, value: unknown): Path {
  if (!(value instanceof Uint8Array)) throw badInput(method, "expected a path as a Uint8Array, got", value);
  return value;
}

/** Checks a relation value. */
export function checkRelation(method: string, value: unknown): RelationType {
  if (!relations.has(value)) throw badInput(method, "unknown relation", value);
  return value as RelationType;
}

/** Checks an entity value. */
export function checkEntity(method: string, value: unknown): EntityType {
  if (!entities.has(value)) throw badInput(method, "unknown entity", value);
  return value as EntityType;
}

/** Checks that a value is a `Map`. */
export function checkMap(method: string, value: unknown): Map<unknown, unknown> {
  if (!(value instanceof Map)) throw badInput(method, "expected a Map, got", value);
  return value;
}

/** Checks that a value is iterable (and not a string) and returns its items. */
export function checkIterable(method: string, value: unknown): Iterable<unknown> {
  if (
    value === null ||
    typeof value !== "object" ||
    typeof (value as Iterable<unknown>)[Symbol.iterator] !== "function"
  )
    throw badInput(method, "expected an iterable, got", value);
  return value as Iterable<unknown>;
}

/** Checks a directory's data. */
export function checkDirectoryData(method: string, value: unknown): DirectoryData {
  if (value === null || typeof value !== "object")
    throw badInput(method, "expected {date, flat}, got", value);
  const { date, flat } = value as DirectoryData;
  if (typeof flat !== "boolean") throw badInput(method, "expected flat to be a boolean, got", flat);
  return { date: checkOptionalTimestamp(method, date), flat };
}

/** Checks a revision's data. */
export function checkRevisionData(method: string, value: unknown): RevisionData {
  if (value === null || typeof value !== "object")
    throw badInput(method, "expected {date, origin}, got", value);
  const { date, origin } = value as RevisionData;
  return {
    date: checkOptionalTimestamp(method, date),
    origin: origin === null ? null : checkSha1(method, origin),
  };
}

/** Checks an origin URL. */
export function checkUrl(method: string, value: unknown): string {
  if (typeof value !== "string") throw badInput(method, "expected a URL string, got", value);
  return value;
}

/** Checks one relation row against the relation's path rule. */
export function checkRelationData(method: string, relation: RelationType, value: unknown): RelationData {
  if (value === null || typeof value !== "object") throw badInput(method, "expected {dst, path}, got", value);
  const { dst, path } = value as RelationData;
  checkSha1(method, dst);
  if (relationHasPath(relation)) {
    if (path === null || path === undefined)
      throw badInput(method, `${relation} rows require a path, got`, path);
    checkPath(method, path);
  } else if (path !== null) {
    throw badInput(method, `${relation} rows require path: null, got`, path);
  }
  return { dst, path };
}

/** Checks a read's `limit`: a non-negative integer or `undefined`. */
export function checkLimit(method: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
    throw badInput(method, "expected limit to be a non-negative integer, got", value);
  return value;
}

/** Checks every id of an iterable and returns them distinct. */
export function checkIds(method: string, ids: unknown): Sha1[] {
  const out = new Set<Sha1>();
  for (const id of checkIterable(method, ids)) out.add(checkSha1(method, id));
  return [...out];
}
