import type { Logger } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import {
  type DeleteTopologyOptions,
  openPostgresStorage,
  openSqliteStorage,
  type PostgresStorageOptions,
  type ProvenanceStorage,
  RmqStorageClient,
  type RmqStorageClientOptions,
  RmqStorageServer,
  type RmqStorageServerOptions,
  type SqliteStorageOptions,
  type WaitForServerOptions,
} from "./index.js";

/** The option names that end in `Ms` (durations) or `Bytes` (sizes). */
type MsKeys<T> = Extract<keyof T, `${string}Ms`>;
type BytesKeys<T> = Extract<keyof T, `${string}Bytes`>;

declare const storage: ProvenanceStorage;
const url = "amqp://guest:guest@127.0.0.1:5672";

describe("option names and units", () => {
  it("lists exactly the documented options of each factory", () => {
    // Pinning the key sets: a new option spelled without its unit (or a revived old name) fails here.
    expectTypeOf<keyof RmqStorageServerOptions>().toEqualTypeOf<
      | "url"
      | "storage"
      | "maxItemsPerWrite"
      | "maxConcurrentWrites"
      | "prefetch"
      | "processes"
      | "connectTimeoutMs"
      | "heartbeatMs"
      | "prefix"
      | "ranges"
      | "standbyWaitMs"
      | "queueType"
      | "deliveryLimit"
      | "metrics"
      | "logger"
    >();
    expectTypeOf<keyof RmqStorageClientOptions>().toEqualTypeOf<
      | "url"
      | "storage"
      | "itemsPerMessage"
      | "waitMinMs"
      | "waitPerBatchMs"
      | "connectTimeoutMs"
      | "heartbeatMs"
      | "prefix"
      | "logger"
      | "signal"
    >();
    expectTypeOf<keyof SqliteStorageOptions>().toEqualTypeOf<
      "synchronous" | "busyTimeoutMs" | "cacheSizeBytes" | "walAutocheckpoint" | "fileMode" | "logger"
    >();
    expectTypeOf<keyof PostgresStorageOptions>().toEqualTypeOf<
      "schema" | "poolSize" | "connectTimeoutMs" | "logger"
    >();
    expectTypeOf<keyof DeleteTopologyOptions>().toEqualTypeOf<
      "url" | "prefix" | "force" | "connectTimeoutMs"
    >();
    expectTypeOf<keyof WaitForServerOptions>().toEqualTypeOf<"timeoutMs" | "signal">();
    expectTypeOf<WaitForServerOptions["timeoutMs"]>().toEqualTypeOf<number | undefined>();
  });

  it("types every duration (…Ms) and every size (…Bytes) as a plain number", () => {
    expectTypeOf<MsKeys<RmqStorageServerOptions>>().toEqualTypeOf<
      "connectTimeoutMs" | "heartbeatMs" | "standbyWaitMs"
    >();
    expectTypeOf<
      Required<RmqStorageServerOptions>[MsKeys<RmqStorageServerOptions>]
    >().toEqualTypeOf<number>();
    expectTypeOf<MsKeys<RmqStorageClientOptions>>().toEqualTypeOf<
      "waitMinMs" | "waitPerBatchMs" | "connectTimeoutMs" | "heartbeatMs"
    >();
    expectTypeOf<
      Required<RmqStorageClientOptions>[MsKeys<RmqStorageClientOptions>]
    >().toEqualTypeOf<number>();
    expectTypeOf<MsKeys<SqliteStorageOptions>>().toEqualTypeOf<"busyTimeoutMs">();
    expectTypeOf<BytesKeys<SqliteStorageOptions>>().toEqualTypeOf<"cacheSizeBytes">();
    expectTypeOf<
      Required<SqliteStorageOptions>["busyTimeoutMs" | "cacheSizeBytes"]
    >().toEqualTypeOf<number>();
    expectTypeOf<Required<PostgresStorageOptions>[MsKeys<PostgresStorageOptions>]>().toEqualTypeOf<number>();
  });

  it("types the other options precisely", () => {
    expectTypeOf<RmqStorageServerOptions["storage"]>().toEqualTypeOf<
      (() => ProvenanceStorage | Promise<ProvenanceStorage>) | string
    >();
    expectTypeOf<RmqStorageClientOptions["storage"]>().toEqualTypeOf<ProvenanceStorage>();
    expectTypeOf<RmqStorageServerOptions["ranges"]>().toEqualTypeOf<string[] | string | undefined>();
    expectTypeOf<SqliteStorageOptions["synchronous"]>().toEqualTypeOf<"normal" | "full" | undefined>();
    expectTypeOf<RmqStorageClientOptions["logger"]>().toEqualTypeOf<Logger | undefined>();
    expectTypeOf<RmqStorageClientOptions["signal"]>().toEqualTypeOf<AbortSignal | undefined>();
  });
});

describe("required and optional options", () => {
  it("needs url and storage for the server and the client", () => {
    expectTypeOf(RmqStorageServer.start).toBeCallableWith({ url, storage: "sqlite:provenance.db" });
    expectTypeOf(RmqStorageServer.start).toBeCallableWith({ url, storage: () => storage });
    expectTypeOf(RmqStorageServer.start).toBeCallableWith({
      url,
      storage: async () => storage,
      ranges: ["0", "f"],
    });
    expectTypeOf(RmqStorageClient.connect).toBeCallableWith({ url, storage });
    // @ts-expect-error: storage is required
    RmqStorageServer.start({ url });
    // @ts-expect-error: url is required
    RmqStorageClient.connect({ storage });
    // @ts-expect-error: the client reads from a storage object, not a spec string
    RmqStorageClient.connect({ url, storage: "sqlite:provenance.db" });
    // @ts-expect-error: a factory must return a storage
    RmqStorageServer.start({ url, storage: () => "sqlite:provenance.db" });
  });

  it("lets the storages open without options", () => {
    expectTypeOf(openSqliteStorage).toBeCallableWith(":memory:");
    expectTypeOf(openSqliteStorage).toBeCallableWith("provenance.db", {
      synchronous: "full",
      busyTimeoutMs: 0,
    });
    expectTypeOf(openPostgresStorage).toBeCallableWith("postgres://localhost/db");
    expectTypeOf(openPostgresStorage).toBeCallableWith("postgres://localhost/db", {
      schema: "prov",
      poolSize: 4,
    });
    // @ts-expect-error: synchronous is "normal" or "full"
    openSqliteStorage(":memory:", { synchronous: "off" });
  });
});

describe("removed spellings", () => {
  it("rejects the heartbeat in seconds", () => {
    // @ts-expect-error: `heartbeat` (seconds) became `heartbeatMs`
    RmqStorageServer.start({ url, storage: "sqlite:p.db", heartbeat: 10 });
    // @ts-expect-error: `heartbeat` (seconds) became `heartbeatMs`
    RmqStorageClient.connect({ url, storage, heartbeat: 10 });
  });

  it("rejects the client's waits in seconds", () => {
    // @ts-expect-error: `waitMin` (seconds) became `waitMinMs`
    RmqStorageClient.connect({ url, storage, waitMin: 60 });
    // @ts-expect-error: `waitPerBatch` (seconds) became `waitPerBatchMs`
    RmqStorageClient.connect({ url, storage, waitPerBatch: 10 });
    // @ts-expect-error: swh-provenance's snake case is not accepted
    RmqStorageClient.connect({ url, storage, wait_min: 60 });
  });

  it("rejects the SQLite cache size in KiB", () => {
    // @ts-expect-error: `cacheSizeKiB` became `cacheSizeBytes`
    openSqliteStorage("provenance.db", { cacheSizeKiB: 65_536 });
  });

  it("rejects swh-provenance's names of counts", () => {
    // @ts-expect-error: `prefetch_count` is `prefetch`
    RmqStorageServer.start({ url, storage: "sqlite:p.db", prefetch_count: 100 });
    // @ts-expect-error: `batch_size` is `itemsPerMessage`
    RmqStorageClient.connect({ url, storage, batch_size: 100 });
  });

  it("gives the client's items per message and the server's items per storage call distinct names", () => {
    // @ts-expect-error: the client's `batchSize` is `itemsPerMessage`
    RmqStorageClient.connect({ url, storage, batchSize: 100 });
    // @ts-expect-error: the server's `batchSize` is `maxItemsPerWrite`
    RmqStorageServer.start({ url, storage: "sqlite:p.db", batchSize: 100 });
    expectTypeOf<RmqStorageClientOptions["itemsPerMessage"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<RmqStorageServerOptions["maxItemsPerWrite"]>().toEqualTypeOf<number | undefined>();
  });
});
