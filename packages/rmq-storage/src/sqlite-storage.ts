import { type Logger, silentLogger } from "@x/core";
import { createFileExclusive, durationMs, loggerOption, parseOptions, v } from "@x/core/internal";
import type Database from "better-sqlite3";
import { asBuffer, joinPath } from "./bytes.js";
import { loadSqliteDriver } from "./drivers.js";
import { backendError, ErrorCode, RmqStorageError } from "./errors.js";
import { relationEntities, relationHasPath } from "./input.js";
import { intAtLeast, intIn } from "./option-schemas.js";
import type { RelationRows } from "./rows.js";
import { InlineWriter, SqliteWriter, type Writer, type WriteStep } from "./sqlite-writer.js";
import { BaseStorage, type Occurrence } from "./storage-base.js";
import {
  type DirectoryData,
  type EntityType,
  type Path,
  RelationType,
  type RevisionData,
  type Sha1,
  type Timestamp,
} from "./types.js";

/** Options of {@link openSqliteStorage}. */
export interface SqliteStorageOptions {
  /** `PRAGMA synchronous`: `"normal"` survives a crash of the process, `"full"` a power loss too. Default `"normal"`. */
  synchronous?: "normal" | "full";
  /** How long a write waits for another process's lock, in ms; an integer ≥ 0. Default 5 000. */
  busyTimeoutMs?: number;
  /**
   * The page cache of each connection (`PRAGMA cache_size`), in bytes; an integer ≥ 65 536, rounded down to
   * whole KiB. Default 67 108 864 (64 MiB).
   */
  cacheSizeBytes?: number;
  /**
   * WAL pages after which a commit checkpoints the WAL into the database (`PRAGMA wal_autocheckpoint`); an
   * integer ≥ 0, 0 turns automatic checkpoints off. Default 10 000 (about 40 MB with 4 KiB pages).
   */
  walAutocheckpoint?: number;
  /**
   * Mode of the database file when this call creates it, before the umask; SQLite gives its `-wal` and `-shm`
   * files the same mode. A file already there keeps its mode. Default `0o600`: this user alone (the file holds
   * every queued write's data).
   */
  fileMode?: number;
  /** Where write failures are logged. Default: silent. */
  logger?: Logger;
}

const optionsSchema = v.strictObject({
  synchronous: v.enum(["normal", "full"], { error: '"normal" or "full"' }).default("normal"),
  busyTimeoutMs: durationMs({ integer: true }).default(5_000),
  cacheSizeBytes: intAtLeast("bytes", 65_536).default(64 * 1024 * 1024),
  walAutocheckpoint: intAtLeast("pages", 0).default(10_000),
  fileMode: intIn("file mode", 0, 0o777).default(0o600),
  logger: loggerOption,
});

/** The schema version recorded in `PRAGMA user_version`. */
export const SQLITE_SCHEMA_VERSION = 1;

const relationTables = Object.values(RelationType);

const schemaSql = `
CREATE TABLE IF NOT EXISTS content (id INTEGER PRIMARY KEY, sha1 BLOB NOT NULL UNIQUE, date INTEGER);
CREATE TABLE IF NOT EXISTS directory (id INTEGER PRIMARY KEY, sha1 BLOB NOT NULL UNIQUE, date INTEGER, flat INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS revision (id INTEGER PRIMARY KEY, sha1 BLOB NOT NULL UNIQUE, date INTEGER, origin BLOB);
CREATE TABLE IF NOT EXISTS origin (id INTEGER PRIMARY KEY, sha1 BLOB NOT NULL UNIQUE, url TEXT);
CREATE TABLE IF NOT EXISTS location (id INTEGER PRIMARY KEY, path BLOB NOT NULL UNIQUE);
${relationTables
  .map((table) =>
    relationHasPath(table)
      ? `CREATE TABLE IF NOT EXISTS ${table} (src INTEGER NOT NULL, dst INTEGER NOT NULL, loc INTEGER NOT NULL, UNIQUE (src, dst, loc));`
      : `CREATE TABLE IF NOT EXISTS ${table} (src INTEGER NOT NULL, dst INTEGER NOT NULL, UNIQUE (src, dst));`,
  )
  .join("\n")}
${relationTables.map((table) => `CREATE INDEX IF NOT EXISTS ${table}_dst ON ${table} (dst);`).join("\n")}
PRAGMA user_version = ${SQLITE_SCHEMA_VERSION};
`;

const hex = (id: Sha1) => Buffer.from(id, "hex");
const unhex = (blob: Buffer) => blob.toString("hex");
const earliestSql = (table: string) =>
  `CASE WHEN ${table}.date IS NULL THEN excluded.date WHEN excluded.date IS NULL THEN ${table}.date ELSE min(${table}.date, excluded.date) END`;

type Row = Record<string, unknown>;

/**
 * Opens (creating if missing) a provenance storage in an SQLite file, in WAL mode, or in memory with
 * `":memory:"`. A missing file is created with `options.fileMode` (default `0o600`: this user alone), and its
 * `-wal` and `-shm` files get the same mode; a file already there keeps its own.
 *
 * @param path - the database file, or `":memory:"`
 * @param options - see {@link SqliteStorageOptions}
 * @throws `ERR_X_RMQ_STORAGE_DRIVER_UNAVAILABLE` without `better-sqlite3` (`…_DRIVER_VERSION` for an unsupported
 *   one), `ERR_X_RMQ_STORAGE_INVALID_OPTION` for a bad option, `ERR_X_RMQ_STORAGE_BACKEND` when the file cannot
 *   be opened or created
 */
export function openSqliteStorage(path: string, options?: SqliteStorageOptions): Promise<SqliteStorage> {
  return SqliteStorage.open(path, options);
}

/**
 * The SQLite backend of {@link ProvenanceStorage}; open it with {@link openSqliteStorage}. Reads run on the
 * caller's thread. Writes of a file database run in a writer thread with a connection of its own (see
 * `SqliteWriter`), in group commits: the writes that arrive while one group commits form the next.
 */
export class SqliteStorage extends BaseStorage {
  readonly #path: string;
  readonly #db: Database.Database;
  readonly #writer: Writer;
  readonly #sql: (source: string) => Database.Statement;

  /** The implementation of {@link openSqliteStorage}, which is how to open one. */
  static async open(path: string, options?: SqliteStorageOptions): Promise<SqliteStorage> {
    const parsed = parseOptions(optionsSchema, options, ErrorCode.INVALID_OPTION, RmqStorageError);
    if (typeof path !== "string" || path === "")
      throw new RmqStorageError(
        ErrorCode.INVALID_OPTION,
        `invalid option path: ${JSON.stringify(path)} (expected a file path or ":memory:")`,
      );
    const Driver = loadSqliteDriver();
    let db: Database.Database | undefined;
    try {
      if (path !== ":memory:") createFileExclusive(path, parsed.fileMode);
      db = new Driver(path, { timeout: parsed.busyTimeoutMs });
      if (path !== ":memory:") db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${parsed.synchronous.toUpperCase()}`);
      // A negative cache_size is in KiB.
      const cacheSize = `cache_size = -${Math.floor(parsed.cacheSizeBytes / 1024)}`;
      db.pragma(cacheSize);
      db.pragma(`wal_autocheckpoint = ${parsed.walAutocheckpoint}`);
      db.defaultSafeIntegers(true);
      const database = db;
      database.transaction(() => database.exec(schemaSql)).immediate();
      const writer =
        path === ":memory:"
          ? new InlineWriter(database)
          : new SqliteWriter({
              path,
              busyTimeoutMs: parsed.busyTimeoutMs,
              pragmas: [
                `synchronous = ${parsed.synchronous.toUpperCase()}`,
                cacheSize,
                `wal_autocheckpoint = ${parsed.walAutocheckpoint}`,
              ],
            });
      return new SqliteStorage(path, database, writer, parsed.logger);
    } catch (cause) {
      db?.close();
      throw backendError(`cannot open SQLite storage ${JSON.stringify(path)}`, cause);
    }
  }

  private constructor(path: string, db: Database.Database, writer: Writer, logger: Logger = silentLogger) {
    super(logger);
    this.#path = path;
    this.#db = db;
    this.#writer = writer;
    const cache = new Map<string, Database.Statement>();
    this.#sql = (source) => {
      let statement = cache.get(source);
      if (statement === undefined) {
        statement = db.prepare(source);
        cache.set(source, statement);
      }
      return statement;
    };
  }

  protected writeContent(rows: Array<[Sha1, Timestamp]>): Promise<void> {
    return this.#writer.write([
      [
        `INSERT INTO content (sha1, date) VALUES (unhex(?), ?) ON CONFLICT (sha1) DO UPDATE SET date = ${earliestSql("content")}`,
        rows,
      ],
    ]);
  }

  protected writeDirectory(rows: Array<[Sha1, DirectoryData]>): Promise<void> {
    return this.#writer.write([
      [
        `INSERT INTO directory (sha1, date, flat) VALUES (unhex(?), ?, ?) ON CONFLICT (sha1) DO UPDATE SET date = ${earliestSql("directory")}, flat = max(directory.flat, excluded.flat)`,
        rows.map(([id, { date, flat }]) => [id, date, flat ? 1 : 0]),
      ],
    ]);
  }

  protected writeLocation(paths: Path[]): Promise<void> {
    return this.#writer.write([insertLocations(paths)]);
  }

  protected writeOrigin(rows: Array<[Sha1, string]>): Promise<void> {
    return this.#writer.write([
      [
        "INSERT INTO origin (sha1, url) VALUES (unhex(?), ?) ON CONFLICT (sha1) DO UPDATE SET url = coalesce(origin.url, excluded.url)",
        rows,
      ],
    ]);
  }

  protected writeRevision(rows: Array<[Sha1, RevisionData | null]>): Promise<void> {
    // One statement for both kinds of rows: a bare id (null data) inserts an empty row or changes nothing.
    return this.#writer.write([
      [
        `INSERT INTO revision (sha1, date, origin) VALUES (unhex(?), ?, unhex(?)) ON CONFLICT (sha1) DO UPDATE SET date = ${earliestSql("revision")}, origin = coalesce(excluded.origin, revision.origin)`,
        rows.map(([id, data]) => [id, data?.date ?? null, data?.origin ?? null]),
      ],
    ]);
  }

  protected writeRelation({ relation, src, dst, srcIds, dstIds, paths, rows }: RelationRows): Promise<void> {
    const ensure = (entity: EntityType, ids: Sha1[]): WriteStep => [
      `INSERT OR IGNORE INTO ${entity} (sha1) VALUES (unhex(?))`,
      ids.map((id) => [id]),
    ];
    const withPath = relationHasPath(relation);
    const insert: WriteStep = withPath
      ? [
          `INSERT OR IGNORE INTO ${relation} (src, dst, loc) SELECT (SELECT id FROM ${src} WHERE sha1 = unhex(?)), (SELECT id FROM ${dst} WHERE sha1 = unhex(?)), (SELECT id FROM location WHERE path = unhex(?))`,
          rows.map(([s, d, path]) => [s, d, asBuffer(path as Path).toString("hex")]),
        ]
      : [
          `INSERT OR IGNORE INTO ${relation} (src, dst) SELECT (SELECT id FROM ${src} WHERE sha1 = unhex(?)), (SELECT id FROM ${dst} WHERE sha1 = unhex(?))`,
          rows.map(([s, d]) => [s, d]),
        ];
    return this.#writer.write([ensure(src, srcIds), ensure(dst, dstIds), insertLocations(paths), insert]);
  }

  #each<T>(ids: Sha1[], source: string, map: (row: Row, id: Sha1) => T | undefined): Array<[Sha1, T]> {
    const statement = this.#sql(source);
    const out: Array<[Sha1, T]> = [];
    for (const id of ids) {
      const row = statement.get(hex(id)) as Row | undefined;
      const value = row === undefined ? undefined : map(row, id);
      if (value !== undefined) out.push([id, value]);
    }
    return out;
  }

  protected readContent(ids: Sha1[]): Array<[Sha1, Timestamp]> {
    return this.#each(
      ids,
      "SELECT date FROM content WHERE sha1 = ? AND date IS NOT NULL",
      (row) => row.date as bigint,
    );
  }

  protected readDirectory(ids: Sha1[]): Array<[Sha1, DirectoryData]> {
    return this.#each(ids, "SELECT date, flat FROM directory WHERE sha1 = ? AND date IS NOT NULL", (row) => ({
      date: row.date as bigint,
      flat: row.flat !== 0n,
    }));
  }

  protected readRevision(ids: Sha1[]): Array<[Sha1, RevisionData]> {
    return this.#each(
      ids,
      "SELECT date, origin FROM revision WHERE sha1 = ? AND (date IS NOT NULL OR origin IS NOT NULL)",
      (row) => ({
        date: (row.date as bigint | null) ?? null,
        origin: row.origin ? unhex(row.origin as Buffer) : null,
      }),
    );
  }

  protected readOrigin(ids: Sha1[]): Array<[Sha1, string]> {
    return this.#each(
      ids,
      "SELECT url FROM origin WHERE sha1 = ? AND url IS NOT NULL",
      (row) => row.url as string,
    );
  }

  protected readEntityIds(entity: EntityType): Sha1[] {
    return (this.#sql(`SELECT sha1 FROM ${entity}`).pluck().all() as Buffer[]).map(unhex);
  }

  protected readLocations(): Path[] {
    return this.#sql("SELECT path FROM location ORDER BY path").pluck().all() as Buffer[];
  }

  protected readRelation(
    relation: RelationType,
    ids: Sha1[] | null,
    reverse: boolean,
  ): Array<[Sha1, Sha1, Path | null]> {
    const [src, dst] = relationEntities(relation);
    const withPath = relationHasPath(relation);
    const select = `SELECT s.sha1 AS src, d.sha1 AS dst, ${withPath ? "l.path" : "NULL"} AS path FROM ${relation} r
      JOIN ${src} s ON s.id = r.src JOIN ${dst} d ON d.id = r.dst ${withPath ? "JOIN location l ON l.id = r.loc" : ""}`;
    const rows: Row[] =
      ids === null
        ? (this.#sql(select).all() as Row[])
        : ids.flatMap(
            (id) => this.#sql(`${select} WHERE ${reverse ? "d" : "s"}.sha1 = ?`).all(hex(id)) as Row[],
          );
    return rows.map((row) => [
      unhex(row.src as Buffer),
      unhex(row.dst as Buffer),
      (row.path as Buffer | null) ?? null,
    ]);
  }

  protected readOccurrences(id: Sha1, all: boolean): Occurrence[] {
    const direct = this.#sql(`SELECT r.sha1 AS revision, r.date, o.url AS origin, l.path
      FROM content c JOIN content_in_revision cr ON cr.src = c.id JOIN revision r ON r.id = cr.dst
      JOIN location l ON l.id = cr.loc LEFT JOIN origin o ON o.sha1 = r.origin
      WHERE c.sha1 = ? AND r.date IS NOT NULL`).all(hex(id)) as Row[];
    const out: Occurrence[] = direct.map((row) => occurrence(row, row.path as Buffer));
    if (!all) return out;
    const indirect =
      this.#sql(`SELECT r.sha1 AS revision, r.date, o.url AS origin, dl.path AS dir_path, cl.path AS cnt_path
      FROM content c JOIN content_in_directory cd ON cd.src = c.id JOIN directory_in_revision dr ON dr.src = cd.dst
      JOIN revision r ON r.id = dr.dst JOIN location cl ON cl.id = cd.loc JOIN location dl ON dl.id = dr.loc
      LEFT JOIN origin o ON o.sha1 = r.origin
      WHERE c.sha1 = ? AND r.date IS NOT NULL`).all(hex(id)) as Row[];
    for (const row of indirect)
      out.push(occurrence(row, joinPath(row.dir_path as Buffer, row.cnt_path as Buffer)));
    return out;
  }

  protected async closeBackend(): Promise<void> {
    await this.#writer.close();
    this.#db.close();
  }

  /**
   * Closes the storage (the queued writes commit first), then deletes the database file with its `-wal`
   * and `-shm` files; an in-memory database is simply closed. For tests and ephemeral deployments: close
   * every other connection to the file first (a server, a reader), since SQLite cannot tell them it is gone.
   *
   * @throws `ERR_X_RMQ_STORAGE_CLOSED` after `close()`, `ERR_X_RMQ_STORAGE_BACKEND` when a file cannot be
   *   deleted
   */
  drop(): Promise<void> {
    return this.dropOnce("drop", async () => {
      await this.closeBackend();
      if (this.#path === ":memory:") return;
      try {
        // node:fs from getBuiltinModule, not an import: its ESM import costs the package import time (#31)
        const { rm } = process.getBuiltinModule("node:fs").promises;
        for (const suffix of ["-wal", "-shm", ""]) await rm(this.#path + suffix, { force: true });
      } catch (cause) {
        throw backendError(`cannot drop SQLite storage ${JSON.stringify(this.#path)}`, cause);
      }
    });
  }
}

/**
 * The step that inserts `paths` (as hex text: a pooled `Buffer` would carry its whole 8 KiB slab across
 * the thread boundary).
 */
function insertLocations(paths: Path[]): WriteStep {
  return [
    "INSERT OR IGNORE INTO location (path) VALUES (unhex(?))",
    paths.map((path) => [asBuffer(path).toString("hex")]),
  ];
}

function occurrence(row: Row, path: Buffer): Occurrence {
  return {
    revision: unhex(row.revision as Buffer),
    date: row.date as bigint,
    origin: (row.origin as string | null) ?? null,
    path,
  };
}
