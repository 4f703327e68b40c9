import { describe, expectTypeOf, it } from "vitest";
import {
  type DirectoryData,
  EntityType,
  MAX_TIMESTAMP,
  MIN_TIMESTAMP,
  openPostgresStorage,
  openSqliteStorage,
  type Path,
  type PostgresStorage,
  type ProvenanceResult,
  type ProvenanceStorage,
  type RelationData,
  RelationType,
  type RevisionData,
  RmqStorageClient,
  RmqStorageServer,
  type Sha1,
  type SQLITE_SCHEMA_VERSION,
  type SqliteStorage,
  type Timestamp,
} from "./index.js";
import {
  type Item,
  resolveDates,
  resolveDirectory,
  resolveRelation,
  resolveRevision,
  routingKey,
  splitRanges,
} from "./routing-entry.js";

declare const storage: ProvenanceStorage;
declare const sqlite: SqliteStorage;
declare const client: RmqStorageClient;
const id: Sha1 = "c0d8f6e4a1b2c3d4e5f60718293a4b5c6d7e8f90";

describe("scalar types", () => {
  it("ids are strings, timestamps bigint µs, paths bytes", () => {
    expectTypeOf<Sha1>().toEqualTypeOf<string>();
    expectTypeOf<Timestamp>().toEqualTypeOf<bigint>();
    expectTypeOf<Path>().toEqualTypeOf<Uint8Array>();
    expectTypeOf(MIN_TIMESTAMP).toExtend<Timestamp>();
    expectTypeOf(MAX_TIMESTAMP).toExtend<Timestamp>();
    expectTypeOf<typeof SQLITE_SCHEMA_VERSION>().toEqualTypeOf<1>();
  });

  it("RelationType and EntityType are objects of literals and their unions", () => {
    expectTypeOf(RelationType.CNT_EARLY_IN_REV).toEqualTypeOf<"content_in_revision">();
    expectTypeOf<RelationType>().toEqualTypeOf<
      | "content_in_revision"
      | "content_in_directory"
      | "directory_in_revision"
      | "revision_in_origin"
      | "revision_before_revision"
    >();
    expectTypeOf(EntityType.ORIGIN).toEqualTypeOf<"origin">();
    expectTypeOf<EntityType>().toEqualTypeOf<"content" | "directory" | "revision" | "origin">();
  });

  it("types the records", () => {
    expectTypeOf<DirectoryData>().toEqualTypeOf<{ date: bigint | null; flat: boolean }>();
    expectTypeOf<RevisionData>().toEqualTypeOf<{ date: bigint | null; origin: string | null }>();
    expectTypeOf<RelationData>().toEqualTypeOf<{ dst: string; path: Uint8Array | null }>();
    expectTypeOf<ProvenanceResult>().toEqualTypeOf<{
      content: string;
      revision: string;
      date: bigint;
      origin: string | null;
      path: Uint8Array;
    }>();
  });
});

describe("ProvenanceStorage writes", () => {
  it("resolve a boolean and take bigint timestamps, never numbers or Dates", () => {
    expectTypeOf(storage.contentAdd(new Map([[id, 1_700_000_000_123_457n]]))).toEqualTypeOf<
      Promise<boolean>
    >();
    // @ts-expect-error: a timestamp is a bigint of µs, not a number
    storage.contentAdd(new Map([[id, 1_700_000_000_123]]));
    // @ts-expect-error: nor a Date
    storage.contentAdd(new Map([[id, new Date()]]));
    expectTypeOf(storage.directoryAdd).toBeCallableWith(new Map([[id, { date: null, flat: true }]]));
    expectTypeOf(storage.locationAdd).toBeCallableWith([new Uint8Array([47])]);
    // @ts-expect-error: a path is bytes, not a string
    storage.locationAdd(["/src"]);
    expectTypeOf(storage.originAdd).toBeCallableWith(new Map([[id, "https://example.org/repo"]]));
  });

  it("revisionAdd takes bare ids or ids with data", () => {
    expectTypeOf(storage.revisionAdd).toBeCallableWith([id]);
    expectTypeOf(storage.revisionAdd).toBeCallableWith(new Set([id]));
    expectTypeOf(storage.revisionAdd).toBeCallableWith(new Map([[id, { date: 1n, origin: null }]]));
  });

  it("relationAdd takes a RelationType and rows keyed by source", () => {
    expectTypeOf(storage.relationAdd).toBeCallableWith(
      RelationType.CNT_IN_DIR,
      new Map([[id, [{ dst: id, path: new Uint8Array() }]]]),
    );
    expectTypeOf(storage.relationAdd).toBeCallableWith(
      "revision_before_revision",
      new Map([[id, new Set<RelationData>()]]),
    );
    // @ts-expect-error: not a relation
    storage.relationAdd("content_in_origin", new Map());
  });
});

describe("ProvenanceStorage reads", () => {
  it("return Maps of typed values, keyed by id", () => {
    expectTypeOf(storage.contentGet([id])).toEqualTypeOf<Promise<Map<string, bigint>>>();
    expectTypeOf(storage.directoryGet([id])).toEqualTypeOf<Promise<Map<string, DirectoryData>>>();
    expectTypeOf(storage.revisionGet([id])).toEqualTypeOf<Promise<Map<string, RevisionData>>>();
    expectTypeOf(storage.originGet([id])).toEqualTypeOf<Promise<Map<string, string>>>();
    expectTypeOf(storage.relationGet(RelationType.DIR_IN_REV, [id], true)).toEqualTypeOf<
      Promise<Map<string, RelationData[]>>
    >();
    expectTypeOf(storage.relationGetAll(RelationType.REV_IN_ORG)).toEqualTypeOf<
      Promise<Map<string, RelationData[]>>
    >();
  });

  it("return a Set of ids, an array of paths, and occurrences or null", () => {
    expectTypeOf(storage.entityGetAll(EntityType.CONTENT)).toEqualTypeOf<Promise<Set<string>>>();
    // @ts-expect-error: location is not an entity of entityGetAll (it has locationGetAll)
    storage.entityGetAll("location");
    expectTypeOf(storage.locationGetAll()).toEqualTypeOf<Promise<Uint8Array[]>>();
    expectTypeOf(storage.contentFindFirst(id)).toEqualTypeOf<Promise<ProvenanceResult | null>>();
    expectTypeOf(storage.contentFindAll(id)).toEqualTypeOf<Promise<ProvenanceResult[]>>();
    expectTypeOf(storage.contentFindAll).toBeCallableWith(id, 10);
  });

  it("return nothing loosely typed", () => {
    // No method of the interface resolves with `any` (the exact checks above also catch it per method).
    type Resolved = Awaited<ReturnType<ProvenanceStorage[keyof ProvenanceStorage]>>;
    expectTypeOf<Resolved>().not.toBeAny();
    expectTypeOf<Parameters<ProvenanceStorage[keyof ProvenanceStorage]>[number]>().not.toBeAny();
  });
});

describe("implementations", () => {
  it("the storages and the client are all ProvenanceStorages, with await using", () => {
    expectTypeOf<SqliteStorage>().toExtend<ProvenanceStorage>();
    expectTypeOf<PostgresStorage>().toExtend<ProvenanceStorage>();
    expectTypeOf<RmqStorageClient>().toExtend<ProvenanceStorage>();
    expectTypeOf<SqliteStorage>().toExtend<AsyncDisposable>();
    expectTypeOf<PostgresStorage>().toExtend<AsyncDisposable>();
    expectTypeOf<RmqStorageClient>().toExtend<AsyncDisposable>();
    expectTypeOf<RmqStorageServer>().toExtend<AsyncDisposable>();
  });

  it("the client reads the same types as a storage", () => {
    expectTypeOf(client.entityGetAll).toEqualTypeOf<ProvenanceStorage["entityGetAll"]>();
    expectTypeOf(sqlite.contentGet).toEqualTypeOf<ProvenanceStorage["contentGet"]>();
  });

  it("factories resolve with their class", () => {
    expectTypeOf(openSqliteStorage(":memory:")).toEqualTypeOf<Promise<SqliteStorage>>();
    expectTypeOf(openPostgresStorage("postgres://localhost/db")).toEqualTypeOf<Promise<PostgresStorage>>();
    expectTypeOf(RmqStorageServer.start).returns.toEqualTypeOf<Promise<RmqStorageServer>>();
    expectTypeOf(RmqStorageClient.connect).returns.toEqualTypeOf<Promise<RmqStorageClient>>();
    expectTypeOf<RmqStorageServer["stop"]>().toEqualTypeOf<() => Promise<void>>();
  });

  it("the two storages can be dropped; the client cannot drop what it only reads", () => {
    expectTypeOf<SqliteStorage["drop"]>().toEqualTypeOf<() => Promise<void>>();
    expectTypeOf<PostgresStorage["drop"]>().toEqualTypeOf<() => Promise<void>>();
    expectTypeOf<RmqStorageClient>().not.toHaveProperty("drop");
  });
});

describe("pure functions", () => {
  it("routingKey() and splitRanges()", () => {
    expectTypeOf(routingKey("content_add", id)).toEqualTypeOf<string>();
    expectTypeOf(routingKey).toBeCallableWith("relation_add", id, RelationType.CNT_EARLY_IN_REV);
    expectTypeOf(splitRanges(new Map(), "content_add")).toEqualTypeOf<Map<string, Item[]>>();
    expectTypeOf<Item>().toEqualTypeOf<readonly unknown[]>();
  });

  it("the resolve functions merge into the storage's shapes", () => {
    expectTypeOf(resolveDates([[id, 1n]])).toEqualTypeOf<Map<string, bigint>>();
    expectTypeOf(resolveDirectory([[id, { date: null, flat: false }]])).toEqualTypeOf<
      Map<string, DirectoryData>
    >();
    expectTypeOf(resolveRevision([[id], [id, { date: 1n, origin: id }]])).toEqualTypeOf<
      Map<string, RevisionData>
    >();
    expectTypeOf(resolveRelation([[id, id, null]])).toEqualTypeOf<Map<string, RelationData[]>>();
    // @ts-expect-error: dates are bigint
    resolveDates([[id, 1]]);
  });
});
