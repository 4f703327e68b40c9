/** A SHA-1 identifier: exactly 40 lowercase hexadecimal characters. */
export type Sha1 = string;

/** Microseconds since 1970-01-01T00:00:00Z (UTC), from year 1 to year 9999 inclusive. */
export type Timestamp = bigint;

/** A path, as bytes; compared, deduplicated and ordered by value (unsigned bytes, shorter prefix first). */
export type Path = Uint8Array;

/** The five provenance relations; each value names its table: `<source entity>_…_<destination entity>`. */
export const RelationType = {
  CNT_EARLY_IN_REV: "content_in_revision",
  CNT_IN_DIR: "content_in_directory",
  DIR_IN_REV: "directory_in_revision",
  REV_IN_ORG: "revision_in_origin",
  REV_BEFORE_REV: "revision_before_revision",
} as const;

/** One of the values of {@link RelationType}. */
export type RelationType = (typeof RelationType)[keyof typeof RelationType];

/** The four provenance entities. */
export const EntityType = {
  CONTENT: "content",
  DIRECTORY: "directory",
  REVISION: "revision",
  ORIGIN: "origin",
} as const;

/** One of the values of {@link EntityType}. */
export type EntityType = (typeof EntityType)[keyof typeof EntityType];

/** What a directory carries: its earliest date (or `null`) and whether it was flattened. */
export interface DirectoryData {
  date: Timestamp | null;
  flat: boolean;
}

/** What a revision carries: its date and the id of the origin it was found in, either possibly `null`. */
export interface RevisionData {
  date: Timestamp | null;
  origin: Sha1 | null;
}

/** One row of a relation, seen from its source: the destination and the path (`null` for the path-less relations). */
export interface RelationData {
  dst: Sha1;
  path: Path | null;
}

/** One occurrence of a content: in which revision, when (the revision's date), from which origin URL, at which path. */
export interface ProvenanceResult {
  content: Sha1;
  revision: Sha1;
  date: Timestamp;
  origin: string | null;
  path: Path;
}

/**
 * The provenance index: write methods resolve `true` once every item is durably stored and `false` when it
 * could not be; they reject only for bad input (`ERR_X_RMQ_STORAGE_BAD_INPUT`) or after `close()`
 * (`ERR_X_RMQ_STORAGE_CLOSED`). Reads reject with those codes or `ERR_X_RMQ_STORAGE_BACKEND`.
 */
export interface ProvenanceStorage {
  /** Adds contents with their dates; an existing content keeps the earlier date. */
  contentAdd(cnts: Map<Sha1, Timestamp>): Promise<boolean>;
  /** Adds directories; the earliest non-null date wins and `flat` is OR-ed. */
  directoryAdd(dirs: Map<Sha1, DirectoryData>): Promise<boolean>;
  /** Adds distinct paths. */
  locationAdd(paths: Iterable<Path>): Promise<boolean>;
  /** Adds origins with their URLs; the first URL stored for an id wins. */
  originAdd(orgs: Map<Sha1, string>): Promise<boolean>;
  /** Adds bare revisions, or revisions with data (earliest non-null date, last non-null origin). */
  revisionAdd(revs: Iterable<Sha1> | Map<Sha1, RevisionData>): Promise<boolean>;
  /** Adds relation rows, creating the entities and locations they refer to. */
  relationAdd(relation: RelationType, data: Map<Sha1, Iterable<RelationData>>): Promise<boolean>;
  /** The earliest occurrence of a content in a dated revision, or `null`. */
  contentFindFirst(id: Sha1): Promise<ProvenanceResult | null>;
  /** Every occurrence of a content, directly or through directories, earliest first; at most `limit`. */
  contentFindAll(id: Sha1, limit?: number): Promise<ProvenanceResult[]>;
  /** The dates of the given contents that have one. */
  contentGet(ids: Iterable<Sha1>): Promise<Map<Sha1, Timestamp>>;
  /** The data of the given directories that have a date. */
  directoryGet(ids: Iterable<Sha1>): Promise<Map<Sha1, DirectoryData>>;
  /** The data of the given revisions that have a date or an origin. */
  revisionGet(ids: Iterable<Sha1>): Promise<Map<Sha1, RevisionData>>;
  /** The URLs of the given origins that have one. */
  originGet(ids: Iterable<Sha1>): Promise<Map<Sha1, string>>;
  /** Every id of an entity's table. */
  entityGetAll(entity: EntityType): Promise<Set<Sha1>>;
  /** Every path, in ascending byte order. */
  locationGetAll(): Promise<Path[]>;
  /** The rows whose source (or, with `reverse`, destination) is in `ids`, keyed by source. */
  relationGet(
    relation: RelationType,
    ids: Iterable<Sha1>,
    reverse?: boolean,
  ): Promise<Map<Sha1, RelationData[]>>;
  /** Every row of a relation, keyed by source. */
  relationGetAll(relation: RelationType): Promise<Map<Sha1, RelationData[]>>;
  /** Releases the storage; idempotent. */
  close(): Promise<void>;
}

/** The write methods of {@link ProvenanceStorage}, by their wire names. */
export type WriteMethod =
  | "content_add"
  | "directory_add"
  | "location_add"
  | "origin_add"
  | "revision_add"
  | "relation_add";
