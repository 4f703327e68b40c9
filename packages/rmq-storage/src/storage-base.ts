import { type Logger, XError } from "@x/core";
import { bytesKey, compareBytes, compareNullableBytes, copyPath } from "./bytes.js";
import { backendError, closedError } from "./errors.js";
import { checkEntity, checkIds, checkLimit, checkRelation, checkSha1 } from "./input.js";
import {
  contentRows,
  directoryRows,
  locationRows,
  originRows,
  type RelationRows,
  relationRows,
  revisionRows,
} from "./rows.js";
import type {
  DirectoryData,
  EntityType,
  Path,
  ProvenanceResult,
  ProvenanceStorage,
  RelationData,
  RelationType,
  RevisionData,
  Sha1,
  Timestamp,
} from "./types.js";

/**
 * The rows a backend read, as a map in ascending id order: the order of the `*Get` answers, the same on every
 * backend whatever the order of the ids asked (SQLite reads them one by one, PostgreSQL in one query).
 */
function byId<T>(rows: Array<[Sha1, T]>): Map<Sha1, T> {
  return new Map(rows.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** One occurrence as a backend reports it, before sorting: the content is implied. */
export interface Occurrence {
  revision: Sha1;
  date: Timestamp;
  origin: string | null;
  path: Path;
}

/**
 * The behaviour both backends share: validation (all or nothing), sorted rows, `false` on a failed write,
 * `ERR_X_RMQ_STORAGE_BACKEND` on a failed read, the shapes and orders of reads, and `close()`.
 * A backend implements the primitives below; each write primitive is one transaction.
 */
export abstract class BaseStorage implements ProvenanceStorage {
  #closed = false;
  protected readonly logger: Logger;

  protected constructor(logger: Logger) {
    this.logger = logger;
  }

  protected abstract writeContent(rows: Array<[Sha1, Timestamp]>): Promise<void> | void;
  protected abstract writeDirectory(rows: Array<[Sha1, DirectoryData]>): Promise<void> | void;
  protected abstract writeLocation(paths: Path[]): Promise<void> | void;
  protected abstract writeOrigin(rows: Array<[Sha1, string]>): Promise<void> | void;
  protected abstract writeRevision(rows: Array<[Sha1, RevisionData | null]>): Promise<void> | void;
  protected abstract writeRelation(rows: RelationRows): Promise<void> | void;
  protected abstract readContent(ids: Sha1[]): Promise<Array<[Sha1, Timestamp]>> | Array<[Sha1, Timestamp]>;
  protected abstract readDirectory(
    ids: Sha1[],
  ): Promise<Array<[Sha1, DirectoryData]>> | Array<[Sha1, DirectoryData]>;
  protected abstract readRevision(
    ids: Sha1[],
  ): Promise<Array<[Sha1, RevisionData]>> | Array<[Sha1, RevisionData]>;
  protected abstract readOrigin(ids: Sha1[]): Promise<Array<[Sha1, string]>> | Array<[Sha1, string]>;
  protected abstract readEntityIds(entity: EntityType): Promise<Sha1[]> | Sha1[];
  protected abstract readLocations(): Promise<Path[]> | Path[];
  /** Rows of a relation whose source (or destination, with `reverse`) is in `ids`; every row when `ids` is null. */
  protected abstract readRelation(
    relation: RelationType,
    ids: Sha1[] | null,
    reverse: boolean,
  ): Promise<Array<[Sha1, Sha1, Path | null]>> | Array<[Sha1, Sha1, Path | null]>;
  /** Occurrences in dated revisions through `content_in_revision`, and with `all` through directories. */
  protected abstract readOccurrences(id: Sha1, all: boolean): Promise<Occurrence[]> | Occurrence[];
  protected abstract closeBackend(): Promise<void> | void;

  /** @inheritDoc */
  contentAdd(cnts: Map<Sha1, Timestamp>): Promise<boolean> {
    return this.#write(
      "contentAdd",
      () => contentRows(cnts),
      (rows) => this.writeContent(rows),
    );
  }

  /** @inheritDoc */
  directoryAdd(dirs: Map<Sha1, DirectoryData>): Promise<boolean> {
    return this.#write(
      "directoryAdd",
      () => directoryRows(dirs),
      (rows) => this.writeDirectory(rows),
    );
  }

  /** @inheritDoc */
  locationAdd(paths: Iterable<Path>): Promise<boolean> {
    return this.#write(
      "locationAdd",
      () => locationRows(paths),
      (rows) => this.writeLocation(rows),
    );
  }

  /** @inheritDoc */
  originAdd(orgs: Map<Sha1, string>): Promise<boolean> {
    return this.#write(
      "originAdd",
      () => originRows(orgs),
      (rows) => this.writeOrigin(rows),
    );
  }

  /** @inheritDoc */
  revisionAdd(revs: Iterable<Sha1> | Map<Sha1, RevisionData>): Promise<boolean> {
    return this.#write(
      "revisionAdd",
      () => revisionRows(revs),
      (rows) => this.writeRevision(rows),
    );
  }

  /** @inheritDoc */
  relationAdd(relation: RelationType, data: Map<Sha1, Iterable<RelationData>>): Promise<boolean> {
    return this.#write(
      "relationAdd",
      () => relationRows(checkRelation("relationAdd", relation), data),
      (rows) => this.writeRelation(rows),
      (rows) => rows.rows.length,
    );
  }

  /** @inheritDoc */
  contentFindFirst(id: Sha1): Promise<ProvenanceResult | null> {
    return this.#read("contentFindFirst", async () => {
      checkSha1("contentFindFirst", id);
      return (await this.#findAll(id, false))[0] ?? null;
    });
  }

  /** @inheritDoc */
  contentFindAll(id: Sha1, limit?: number): Promise<ProvenanceResult[]> {
    return this.#read("contentFindAll", async () => {
      checkSha1("contentFindAll", id);
      const max = checkLimit("contentFindAll", limit);
      const all = await this.#findAll(id, true);
      return max === undefined ? all : all.slice(0, max);
    });
  }

  /** @inheritDoc */
  contentGet(ids: Iterable<Sha1>): Promise<Map<Sha1, Timestamp>> {
    return this.#read("contentGet", async () => byId(await this.readContent(checkIds("contentGet", ids))));
  }

  /** @inheritDoc */
  directoryGet(ids: Iterable<Sha1>): Promise<Map<Sha1, DirectoryData>> {
    return this.#read("directoryGet", async () =>
      byId(await this.readDirectory(checkIds("directoryGet", ids))),
    );
  }

  /** @inheritDoc */
  revisionGet(ids: Iterable<Sha1>): Promise<Map<Sha1, RevisionData>> {
    return this.#read("revisionGet", async () => byId(await this.readRevision(checkIds("revisionGet", ids))));
  }

  /** @inheritDoc */
  originGet(ids: Iterable<Sha1>): Promise<Map<Sha1, string>> {
    return this.#read("originGet", async () => byId(await this.readOrigin(checkIds("originGet", ids))));
  }

  /** @inheritDoc */
  entityGetAll(entity: EntityType): Promise<Set<Sha1>> {
    return this.#read(
      "entityGetAll",
      async () => new Set(await this.readEntityIds(checkEntity("entityGetAll", entity))),
    );
  }

  /** @inheritDoc */
  locationGetAll(): Promise<Path[]> {
    return this.#read("locationGetAll", async () =>
      (await this.readLocations()).map(copyPath).sort(compareBytes),
    );
  }

  /** @inheritDoc */
  relationGet(
    relation: RelationType,
    ids: Iterable<Sha1>,
    reverse = false,
  ): Promise<Map<Sha1, RelationData[]>> {
    return this.#read("relationGet", async () => {
      const rel = checkRelation("relationGet", relation);
      const list = checkIds("relationGet", ids);
      if (list.length === 0) return new Map();
      return groupRelation(await this.readRelation(rel, list, reverse === true));
    });
  }

  /** @inheritDoc */
  relationGetAll(relation: RelationType): Promise<Map<Sha1, RelationData[]>> {
    return this.#read("relationGetAll", async () =>
      groupRelation(await this.readRelation(checkRelation("relationGetAll", relation), null, false)),
    );
  }

  /** Closes the backend; idempotent. Every later call rejects with `ERR_X_RMQ_STORAGE_CLOSED`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.closeBackend();
  }

  /** Same as {@link close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Marks the storage closed (so that every later call rejects with `ERR_X_RMQ_STORAGE_CLOSED`), then runs
   * `drop`, which must release the backend and delete what the storage created.
   */
  protected async dropOnce(method: string, drop: () => Promise<void>): Promise<void> {
    if (this.#closed) throw closedError("storage", method);
    this.#closed = true;
    await drop();
  }

  async #findAll(id: Sha1, all: boolean): Promise<ProvenanceResult[]> {
    const unique = new Map<string, ProvenanceResult>();
    for (const o of await this.readOccurrences(id, all)) {
      const key = `${o.revision}${o.date}\u0000${o.origin ?? "\u0001"}\u0000${bytesKey(o.path)}`;
      if (!unique.has(key))
        unique.set(key, {
          content: id,
          revision: o.revision,
          date: o.date,
          origin: o.origin,
          path: copyPath(o.path),
        });
    }
    return [...unique.values()].sort(compareResults);
  }

  async #write<R>(
    method: string,
    validate: () => R,
    write: (rows: R) => Promise<void> | void,
    size: (rows: R) => number = (rows) => (rows as unknown[]).length,
  ): Promise<boolean> {
    if (this.#closed) throw closedError("storage", method);
    const rows = validate();
    const items = size(rows);
    if (items === 0) return true;
    try {
      await write(rows);
      return true;
    } catch (error) {
      this.logger.error({ method, items, err: error }, "storage write failed");
      return false;
    }
  }

  async #read<T>(method: string, read: () => Promise<T>): Promise<T> {
    if (this.#closed) throw closedError("storage", method);
    try {
      return await read();
    } catch (error) {
      if (XError.is(error)) throw error;
      throw backendError(`${method} failed`, error);
    }
  }
}

function compareUrls(a: string | null, b: string | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** The order of occurrences: date, revision id, origin URL (bytes, null last), path bytes. */
function compareResults(a: ProvenanceResult, b: ProvenanceResult): number {
  if (a.date !== b.date) return a.date < b.date ? -1 : 1;
  if (a.revision !== b.revision) return a.revision < b.revision ? -1 : 1;
  return compareUrls(a.origin, b.origin) || compareBytes(a.path, b.path);
}

/** Groups rows by source: keys ascending, each list distinct and sorted by destination, then path. */
function groupRelation(rows: Array<[Sha1, Sha1, Path | null]>): Map<Sha1, RelationData[]> {
  rows.sort((a, b) =>
    a[0] !== b[0]
      ? a[0] < b[0]
        ? -1
        : 1
      : a[1] !== b[1]
        ? a[1] < b[1]
          ? -1
          : 1
        : compareNullableBytes(a[2], b[2]),
  );
  const out = new Map<Sha1, RelationData[]>();
  let last: [Sha1, Sha1, Path | null] | undefined;
  for (const row of rows) {
    if (last && last[0] === row[0] && last[1] === row[1] && compareNullableBytes(last[2], row[2]) === 0)
      continue;
    last = row;
    const value = { dst: row[1], path: row[2] === null ? null : copyPath(row[2]) };
    const list = out.get(row[0]);
    if (list === undefined) out.set(row[0], [value]);
    else list.push(value);
  }
  return out;
}
