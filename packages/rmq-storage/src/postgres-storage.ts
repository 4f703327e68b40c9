import type { InspectOptions, inspect } from "node:util";
import type { Logger } from "@x/core";
import {
  durationMs,
  inspectAs,
  inspectCustom,
  loggerOption,
  parseOptions,
  redactUrl,
  retryWhileUnavailable,
  v,
} from "@x/core/internal";
import type pg from "pg";
import { joinPath } from "./bytes.js";
import { loadPostgresDriver } from "./drivers.js";
import { backendError, ErrorCode, RmqStorageError } from "./errors.js";
import { relationEntities, relationHasPath } from "./input.js";
import { intAtLeast } from "./option-schemas.js";
import type { RelationRows } from "./rows.js";
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

/** Options of {@link openPostgresStorage}. */
export interface PostgresStorageOptions {
  /**
   * The schema holding the tables, created if missing; `^[a-z_][a-z0-9_]{0,62}$`. The URL's `schema` query
   * parameter (`postgres://…?schema=NAME`) means the same; give either, or both with the same name.
   * Default `"public"`.
   */
  schema?: string;
  /** Connections in the pool; an integer ≥ 1. Default 10. */
  poolSize?: number;
  /** How long to wait for a connection, in ms; an integer ≥ 1. Default 10 000. */
  connectTimeoutMs?: number;
  /** Where write failures are logged. Default: silent. */
  logger?: Logger;
}

const optionsSchema = v.strictObject({
  schema: v
    .string({ error: "a schema name" })
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, { error: "a schema name matching ^[a-z_][a-z0-9_]{0,62}$" })
    .default("public"),
  poolSize: intAtLeast("connections", 1).default(10),
  connectTimeoutMs: durationMs({ min: 1, integer: true }).default(10_000),
  logger: loggerOption,
});

const relationTables = Object.values(RelationType);

/** µs ⇄ timestamptz without going through floating point: whole hours plus a remainder of µs. */
const schemaSql = (s: string) => `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE OR REPLACE FUNCTION ${s}.us_to_ts(us int8) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS
  $$ SELECT timestamptz '1970-01-01 00:00:00+00' + make_interval(hours => (us / 3600000000)::int4) + (us % 3600000000) * interval '1 microsecond' $$;
CREATE OR REPLACE FUNCTION ${s}.ts_to_us(ts timestamptz) RETURNS int8 LANGUAGE sql IMMUTABLE AS
  $$ SELECT (extract(epoch FROM ts) * 1000000)::int8 $$;
CREATE TABLE IF NOT EXISTS ${s}.content (id bigserial PRIMARY KEY, sha1 bytea NOT NULL UNIQUE, date timestamptz);
CREATE TABLE IF NOT EXISTS ${s}.directory (id bigserial PRIMARY KEY, sha1 bytea NOT NULL UNIQUE, date timestamptz, flat boolean NOT NULL DEFAULT false);
CREATE TABLE IF NOT EXISTS ${s}.revision (id bigserial PRIMARY KEY, sha1 bytea NOT NULL UNIQUE, date timestamptz, origin bytea);
CREATE TABLE IF NOT EXISTS ${s}.origin (id bigserial PRIMARY KEY, sha1 bytea NOT NULL UNIQUE, url text);
CREATE TABLE IF NOT EXISTS ${s}.location (id bigserial PRIMARY KEY, path bytea NOT NULL UNIQUE);
${relationTables
  .map((table) => {
    const [src, dst] = relationEntities(table);
    return relationHasPath(table)
      ? `CREATE TABLE IF NOT EXISTS ${s}.${table} (src int8 NOT NULL REFERENCES ${s}.${src} (id), dst int8 NOT NULL REFERENCES ${s}.${dst} (id), loc int8 NOT NULL REFERENCES ${s}.location (id), UNIQUE (src, dst, loc));`
      : `CREATE TABLE IF NOT EXISTS ${s}.${table} (src int8 NOT NULL REFERENCES ${s}.${src} (id), dst int8 NOT NULL REFERENCES ${s}.${dst} (id), UNIQUE (src, dst));`;
  })
  .join("\n")}
${relationTables.map((table) => `CREATE INDEX IF NOT EXISTS ${table}_dst ON ${s}.${table} (dst);`).join("\n")}
`;

/** Drops the tables (relations first) and the functions of {@link schemaSql}. */
const dropSql = (s: string) => `
DROP TABLE IF EXISTS ${relationTables.map((table) => `${s}.${table}`).join(", ")};
DROP TABLE IF EXISTS ${s}.content, ${s}.directory, ${s}.revision, ${s}.origin, ${s}.location;
DROP FUNCTION IF EXISTS ${s}.us_to_ts(int8), ${s}.ts_to_us(timestamptz);
`;

/**
 * The connection string without its `schema` query parameter, and the schema: the parameter's or the
 * option's, which must agree when both are given.
 */
function splitSchema(
  url: unknown,
  option: string | undefined,
): { connectionString: string; schema?: string } {
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url))
    throw new RmqStorageError(
      ErrorCode.INVALID_OPTION,
      `invalid option url: ${JSON.stringify(typeof url === "string" ? redactUrl(url) : url)} (expected a postgres:// URL)`,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, ...(option === undefined ? {} : { schema: option }) };
  }
  const fromUrl = parsed.searchParams.get("schema");
  if (fromUrl === null) return { connectionString: url, ...(option === undefined ? {} : { schema: option }) };
  if (option !== undefined && option !== fromUrl)
    throw new RmqStorageError(
      ErrorCode.INVALID_OPTION,
      `invalid option schema: ${JSON.stringify(option)} (expected ${JSON.stringify(fromUrl)}, the schema the URL names, or no schema option)`,
    );
  parsed.searchParams.delete("schema");
  return { connectionString: parsed.toString(), schema: fromUrl };
}

type Row = Record<string, unknown>;
/** The `$1` id list (hex) as a subquery of sha1 values. */
const idList = "(SELECT decode(x, 'hex') FROM unnest($1::text[]) x)";

/**
 * Opens a provenance storage in a PostgreSQL database, creating the schema and its tables if missing
 * (idempotent DDL under an advisory lock, so concurrent opens are safe).
 *
 * @param url - a `postgres://` connection string
 * @param options - see {@link PostgresStorageOptions}
 * @throws `ERR_X_RMQ_STORAGE_DRIVER_UNAVAILABLE` without `pg` (`…_DRIVER_VERSION` for an unsupported one),
 *   `ERR_X_RMQ_STORAGE_INVALID_OPTION` for a bad option, `ERR_X_RMQ_STORAGE_BACKEND` when the server
 *   refuses (at once), does not answer (after 3 s of retries, each logged at `warn`) or the schema cannot be
 *   created
 */
export function openPostgresStorage(url: string, options?: PostgresStorageOptions): Promise<PostgresStorage> {
  return PostgresStorage.open(url, options);
}

/** Runs `statements` in order in one transaction on a pooled connection; rolls back if one fails. */
async function transaction(pool: pg.Pool, statements: Array<[string, unknown[]]>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    for (const [text, values] of statements) await client.query(text, values);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The PostgreSQL backend of {@link ProvenanceStorage}; open it with {@link openPostgresStorage}. */
export class PostgresStorage extends BaseStorage {
  readonly #pool: pg.Pool;
  readonly #s: string;
  /** The connection string with its secrets (password, `?password=`, `?sslpassword=`…) as `***`. */
  readonly #shown: string;

  /** The implementation of {@link openPostgresStorage}, which is how to open one. */
  static async open(url: string, options?: PostgresStorageOptions): Promise<PostgresStorage> {
    parseOptions(optionsSchema, options, ErrorCode.INVALID_OPTION, RmqStorageError);
    const { connectionString, schema } = splitSchema(url, options?.schema);
    const parsed = parseOptions(
      optionsSchema,
      { ...options, ...(schema === undefined ? {} : { schema }) },
      ErrorCode.INVALID_OPTION,
      RmqStorageError,
    );
    const { Pool } = loadPostgresDriver();
    const pool = new Pool({
      connectionString,
      max: parsed.poolSize,
      connectionTimeoutMillis: parsed.connectTimeoutMs,
      options: "-c TimeZone=UTC",
    });
    pool.on("error", (error) => parsed.logger.warn({ err: error }, "idle PostgreSQL connection failed"));
    try {
      // A server that does not answer (yet) gets the short retry every dependency gets; a refusal fails at once.
      await retryWhileUnavailable(
        () =>
          transaction(pool, [
            ["SELECT pg_advisory_xact_lock(hashtext($1))", [`@x/rmq-storage:${parsed.schema}`]],
            [schemaSql(parsed.schema), []],
          ]),
        {
          onRetry: (error, attempt) =>
            parsed.logger.warn(
              { attempt, reason: (error as Error).message },
              "cannot connect to PostgreSQL yet; retrying",
            ),
        },
      );
    } catch (cause) {
      await pool.end().catch(() => {});
      throw backendError(`cannot open PostgreSQL storage (schema ${parsed.schema})`, cause);
    }
    return new PostgresStorage(pool, parsed.schema, parsed.logger, redactUrl(connectionString));
  }

  /** `PostgresStorage { url, schema }`, the URL's secrets shown as `***` (see "Redaction" in the README). */
  [inspectCustom](depth: number, options: InspectOptions, insp: typeof inspect): string {
    return inspectAs("PostgresStorage", this.toJSON(), depth, options, insp);
  }

  /** What `JSON.stringify` shows: the URL with its secrets as `***`, and the schema. */
  toJSON(): { url: string; schema: string } {
    return { url: this.#shown, schema: this.#s };
  }

  /** What `String()` shows: `PostgresStorage postgres://user:***@host/db`, its secrets as `***`. */
  override toString(): string {
    return `PostgresStorage ${this.#shown}`;
  }

  private constructor(pool: pg.Pool, schema: string, logger: Logger, shown: string) {
    super(logger);
    this.#shown = shown;
    this.#pool = pool;
    this.#s = schema;
  }

  async #rows(text: string, values: unknown[] = []): Promise<Row[]> {
    return (await this.#pool.query(text, values)).rows as Row[];
  }

  protected writeContent(rows: Array<[Sha1, Timestamp]>): Promise<void> {
    const s = this.#s;
    return transaction(this.#pool, [
      [
        `INSERT INTO ${s}.content (sha1, date)
         SELECT decode(h, 'hex'), ${s}.us_to_ts(d) FROM unnest($1::text[], $2::int8[]) WITH ORDINALITY AS t(h, d, n) ORDER BY n
         ON CONFLICT (sha1) DO UPDATE SET date = least(content.date, excluded.date)`,
        [rows.map((r) => r[0]), rows.map((r) => r[1].toString())],
      ],
    ]);
  }

  protected writeDirectory(rows: Array<[Sha1, DirectoryData]>): Promise<void> {
    const s = this.#s;
    return transaction(this.#pool, [
      [
        `INSERT INTO ${s}.directory (sha1, date, flat)
         SELECT decode(h, 'hex'), ${s}.us_to_ts(d), f FROM unnest($1::text[], $2::int8[], $3::bool[]) WITH ORDINALITY AS t(h, d, f, n) ORDER BY n
         ON CONFLICT (sha1) DO UPDATE SET date = least(directory.date, excluded.date), flat = directory.flat OR excluded.flat`,
        [rows.map((r) => r[0]), rows.map((r) => r[1].date?.toString() ?? null), rows.map((r) => r[1].flat)],
      ],
    ]);
  }

  #locations(paths: Path[]): [string, unknown[]] {
    return [
      `INSERT INTO ${this.#s}.location (path) SELECT p FROM unnest($1::bytea[]) WITH ORDINALITY AS t(p, n) ORDER BY n ON CONFLICT DO NOTHING`,
      [paths.map((p) => Buffer.from(p))],
    ];
  }

  protected writeLocation(paths: Path[]): Promise<void> {
    return transaction(this.#pool, [this.#locations(paths)]);
  }

  protected writeOrigin(rows: Array<[Sha1, string]>): Promise<void> {
    const s = this.#s;
    return transaction(this.#pool, [
      [
        `INSERT INTO ${s}.origin (sha1, url)
         SELECT decode(h, 'hex'), u FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(h, u, n) ORDER BY n
         ON CONFLICT (sha1) DO UPDATE SET url = coalesce(origin.url, excluded.url)`,
        [rows.map((r) => r[0]), rows.map((r) => r[1])],
      ],
    ]);
  }

  protected writeRevision(rows: Array<[Sha1, RevisionData | null]>): Promise<void> {
    const s = this.#s;
    const bare = rows.every((r) => r[1] === null);
    return transaction(this.#pool, [
      bare
        ? [
            `INSERT INTO ${s}.revision (sha1) SELECT decode(h, 'hex') FROM unnest($1::text[]) WITH ORDINALITY AS t(h, n) ORDER BY n ON CONFLICT DO NOTHING`,
            [rows.map((r) => r[0])],
          ]
        : [
            `INSERT INTO ${s}.revision (sha1, date, origin)
             SELECT decode(h, 'hex'), ${s}.us_to_ts(d), decode(o, 'hex') FROM unnest($1::text[], $2::int8[], $3::text[]) WITH ORDINALITY AS t(h, d, o, n) ORDER BY n
             ON CONFLICT (sha1) DO UPDATE SET date = least(revision.date, excluded.date), origin = coalesce(excluded.origin, revision.origin)`,
            [
              rows.map((r) => r[0]),
              rows.map((r) => r[1]?.date?.toString() ?? null),
              rows.map((r) => r[1]?.origin ?? null),
            ],
          ],
    ]);
  }

  protected writeRelation({ relation, src, dst, srcIds, dstIds, paths, rows }: RelationRows): Promise<void> {
    const s = this.#s;
    const ensure = (entity: EntityType, list: Sha1[]): [string, unknown[]] => [
      `INSERT INTO ${s}.${entity} (sha1) SELECT decode(h, 'hex') FROM unnest($1::text[]) WITH ORDINALITY AS t(h, n) ORDER BY n ON CONFLICT DO NOTHING`,
      [list],
    ];
    const withPath = relationHasPath(relation);
    const insert: [string, unknown[]] = withPath
      ? [
          `INSERT INTO ${s}.${relation} (src, dst, loc)
           SELECT a.id, b.id, l.id FROM unnest($1::text[], $2::text[], $3::bytea[]) WITH ORDINALITY AS t(x, y, p, n)
           JOIN ${s}.${src} a ON a.sha1 = decode(t.x, 'hex') JOIN ${s}.${dst} b ON b.sha1 = decode(t.y, 'hex')
           JOIN ${s}.location l ON l.path = t.p ORDER BY t.n ON CONFLICT DO NOTHING`,
          [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => Buffer.from(r[2] as Path))],
        ]
      : [
          `INSERT INTO ${s}.${relation} (src, dst)
           SELECT a.id, b.id FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(x, y, n)
           JOIN ${s}.${src} a ON a.sha1 = decode(t.x, 'hex') JOIN ${s}.${dst} b ON b.sha1 = decode(t.y, 'hex')
           ORDER BY t.n ON CONFLICT DO NOTHING`,
          [rows.map((r) => r[0]), rows.map((r) => r[1])],
        ];
    const statements = [ensure(src, srcIds), ensure(dst, dstIds)];
    if (paths.length > 0) statements.push(this.#locations(paths));
    statements.push(insert);
    return transaction(this.#pool, statements);
  }

  protected async readContent(list: Sha1[]): Promise<Array<[Sha1, Timestamp]>> {
    const rows = await this.#rows(
      `SELECT encode(sha1, 'hex') AS id, ${this.#s}.ts_to_us(date) AS date FROM ${this.#s}.content WHERE sha1 IN ${idList} AND date IS NOT NULL`,
      [list],
    );
    return rows.map((r) => [r.id as string, BigInt(r.date as string)]);
  }

  protected async readDirectory(list: Sha1[]): Promise<Array<[Sha1, DirectoryData]>> {
    const rows = await this.#rows(
      `SELECT encode(sha1, 'hex') AS id, ${this.#s}.ts_to_us(date) AS date, flat FROM ${this.#s}.directory WHERE sha1 IN ${idList} AND date IS NOT NULL`,
      [list],
    );
    return rows.map((r) => [r.id as string, { date: BigInt(r.date as string), flat: r.flat as boolean }]);
  }

  protected async readRevision(list: Sha1[]): Promise<Array<[Sha1, RevisionData]>> {
    const rows = await this.#rows(
      `SELECT encode(sha1, 'hex') AS id, ${this.#s}.ts_to_us(date) AS date, encode(origin, 'hex') AS origin FROM ${this.#s}.revision
       WHERE sha1 IN ${idList} AND (date IS NOT NULL OR origin IS NOT NULL)`,
      [list],
    );
    return rows.map((r) => [
      r.id as string,
      {
        date: r.date === null ? null : BigInt(r.date as string),
        origin: (r.origin as string | null) ?? null,
      },
    ]);
  }

  protected async readOrigin(list: Sha1[]): Promise<Array<[Sha1, string]>> {
    const rows = await this.#rows(
      `SELECT encode(sha1, 'hex') AS id, url FROM ${this.#s}.origin WHERE sha1 IN ${idList} AND url IS NOT NULL`,
      [list],
    );
    return rows.map((r) => [r.id as string, r.url as string]);
  }

  protected async readEntityIds(entity: EntityType): Promise<Sha1[]> {
    return (await this.#rows(`SELECT encode(sha1, 'hex') AS id FROM ${this.#s}.${entity}`)).map(
      (r) => r.id as string,
    );
  }

  protected async readLocations(): Promise<Path[]> {
    return (await this.#rows(`SELECT path FROM ${this.#s}.location`)).map((r) => r.path as Buffer);
  }

  protected async readRelation(
    relation: RelationType,
    list: Sha1[] | null,
    reverse: boolean,
  ): Promise<Array<[Sha1, Sha1, Path | null]>> {
    const s = this.#s;
    const [src, dst] = relationEntities(relation);
    const withPath = relationHasPath(relation);
    const where = list === null ? "" : `WHERE ${reverse ? "b" : "a"}.sha1 IN ${idList}`;
    const rows = await this.#rows(
      `SELECT encode(a.sha1, 'hex') AS src, encode(b.sha1, 'hex') AS dst, ${withPath ? "l.path" : "NULL::bytea"} AS path
       FROM ${s}.${relation} r JOIN ${s}.${src} a ON a.id = r.src JOIN ${s}.${dst} b ON b.id = r.dst
       ${withPath ? `JOIN ${s}.location l ON l.id = r.loc` : ""} ${where}`,
      list === null ? [] : [list],
    );
    return rows.map((r) => [r.src as string, r.dst as string, (r.path as Buffer | null) ?? null]);
  }

  protected async readOccurrences(id: Sha1, all: boolean): Promise<Occurrence[]> {
    const s = this.#s;
    const direct = await this.#rows(
      `SELECT encode(r.sha1, 'hex') AS revision, ${s}.ts_to_us(r.date) AS date, o.url AS origin, l.path
       FROM ${s}.content c JOIN ${s}.content_in_revision cr ON cr.src = c.id JOIN ${s}.revision r ON r.id = cr.dst
       JOIN ${s}.location l ON l.id = cr.loc LEFT JOIN ${s}.origin o ON o.sha1 = r.origin
       WHERE c.sha1 = decode($1, 'hex') AND r.date IS NOT NULL`,
      [id],
    );
    const out = direct.map((row) => occurrence(row, row.path as Buffer));
    if (!all) return out;
    const indirect = await this.#rows(
      `SELECT encode(r.sha1, 'hex') AS revision, ${s}.ts_to_us(r.date) AS date, o.url AS origin, dl.path AS dir_path, cl.path AS cnt_path
       FROM ${s}.content c JOIN ${s}.content_in_directory cd ON cd.src = c.id JOIN ${s}.directory_in_revision dr ON dr.src = cd.dst
       JOIN ${s}.revision r ON r.id = dr.dst JOIN ${s}.location cl ON cl.id = cd.loc JOIN ${s}.location dl ON dl.id = dr.loc
       LEFT JOIN ${s}.origin o ON o.sha1 = r.origin
       WHERE c.sha1 = decode($1, 'hex') AND r.date IS NOT NULL`,
      [id],
    );
    for (const row of indirect)
      out.push(occurrence(row, joinPath(row.dir_path as Buffer, row.cnt_path as Buffer)));
    return out;
  }

  protected closeBackend(): Promise<void> {
    return this.#pool.end();
  }

  /**
   * Deletes what the storage created in its schema (its tables, with every row, and its two conversion
   * functions), then the schema itself unless it is `public` or still holds something else, and closes the
   * storage. For tests and ephemeral deployments: close every other user of the schema first (a server, a
   * reader), or this waits for their locks.
   *
   * @throws `ERR_X_RMQ_STORAGE_CLOSED` after `close()`, `ERR_X_RMQ_STORAGE_BACKEND` when the statements fail
   */
  drop(): Promise<void> {
    return this.dropOnce("drop", async () => {
      const s = this.#s;
      try {
        await transaction(this.#pool, [
          ["SELECT pg_advisory_xact_lock(hashtext($1))", [`@x/rmq-storage:${s}`]],
          [dropSql(s), []],
        ]);
        if (s !== "public")
          await this.#pool.query(`DROP SCHEMA IF EXISTS ${s}`).catch((error: { code?: string }) => {
            // 2BP01: the schema holds objects the storage did not create; they stay, and so does the schema.
            if (error.code !== "2BP01") throw error;
          });
      } catch (cause) {
        throw backendError(`cannot drop PostgreSQL storage (schema ${s})`, cause);
      } finally {
        await this.#pool.end();
      }
    });
  }
}

function occurrence(row: Row, path: Buffer): Occurrence {
  return {
    revision: row.revision as string,
    date: BigInt(row.date as string),
    origin: (row.origin as string | null) ?? null,
    path,
  };
}
