import type Database from "better-sqlite3";
import { describe, expectTypeOf, it } from "vitest";
import {
  type DispatchRequest,
  type FetcherRun,
  type FetcherRunStatus,
  type Job,
  jitterHash,
  type QueueStatus,
  type QueueView,
  readQueueStatus,
  readQueueView,
  type Supervisor,
  SupervisorClient,
  SupervisorStorage,
  type TlsEndpoint,
  type UnfinishedJob,
  writeQueueHtml,
} from "./index.js";

declare const sup: Supervisor;
declare const client: SupervisorClient;
declare const storage: SupervisorStorage;

describe("Supervisor", () => {
  it("exposes its storage and closes asynchronously, also through await using", () => {
    expectTypeOf(sup.storage).toEqualTypeOf<SupervisorStorage>();
    expectTypeOf(sup.close()).toEqualTypeOf<Promise<void>>();
    expectTypeOf(sup).toExtend<AsyncDisposable>();
  });

  it("tells its TLS address and reloads its TLS files", () => {
    expectTypeOf(sup.tlsAddress()).toEqualTypeOf<{ host: string; port: number } | undefined>();
    expectTypeOf(sup.reloadTls()).toEqualTypeOf<Promise<void>>();
  });

  it("tells its HTTP address and gives its metrics as text", () => {
    expectTypeOf(sup.httpAddress()).toEqualTypeOf<{ host: string; port: number } | undefined>();
    expectTypeOf(sup.metrics()).toEqualTypeOf<Promise<string>>();
  });
});

describe("the queue page's data", () => {
  it("readQueueView reads a page from a connection; writeQueueHtml returns the entries written", () => {
    expectTypeOf(readQueueView(storage.db, { page: 2, pageSize: 50 })).toEqualTypeOf<QueueView>();
    expectTypeOf(readQueueView).parameter(0).toEqualTypeOf<Database.Database>();
    expectTypeOf<QueueView["entries"][number]>().toEqualTypeOf<{
      position: number;
      attrPath: string;
      fetcher: string;
      payload: string;
      waitingSince: number;
      lastStarted: number | null;
      held: boolean;
    }>();
    expectTypeOf<QueueView["cycles"][number]["cycleMs"]>().toEqualTypeOf<number | null>();
    expectTypeOf<QueueView["running"][number]>().toEqualTypeOf<{
      attrPath: string;
      holder: string | null;
      started: number;
      elapsedMs: number;
    }>();
    expectTypeOf<QueueView["finished"][number]>().toEqualTypeOf<{
      attrPath: string;
      exitCode: number | null;
      started: number;
      finished: number;
      durationMs: number;
    }>();
    expectTypeOf(readQueueView).toBeCallableWith(storage.db, { now: Date.now() });
    expectTypeOf(writeQueueHtml).toBeCallableWith("state.db", "queue.html", Date.now());
    expectTypeOf(writeQueueHtml("state.db", "queue.html")).toEqualTypeOf<number>();
  });
});

describe("SupervisorClient", () => {
  it("is created only through connect()", () => {
    expectTypeOf(SupervisorClient.connect("/run/supervisor.sock")).toEqualTypeOf<Promise<SupervisorClient>>();
    const tls: TlsEndpoint = {
      host: "queue",
      port: 7443,
      certFile: "c.pem",
      keyFile: "c.key",
      caFile: "ca.pem",
    };
    expectTypeOf(SupervisorClient.connect(tls)).toEqualTypeOf<Promise<SupervisorClient>>();
    expectTypeOf(SupervisorClient.connect(tls, { signal: AbortSignal.timeout(30_000) })).toEqualTypeOf<
      Promise<SupervisorClient>
    >();
    // @ts-expect-error: a TLS endpoint needs its files
    SupervisorClient.connect({ host: "queue", port: 7443 });
    // @ts-expect-error: the constructor is private
    new SupervisorClient();
  });

  it("resolves each command with a job or null", () => {
    expectTypeOf(client.ready()).toEqualTypeOf<Promise<Job | null>>();
    expectTypeOf(client.done("hello", 0)).toEqualTypeOf<Promise<Job | null>>();
    expectTypeOf<Job>().toEqualTypeOf<{ attrPath: string; payload: string }>();
    // @ts-expect-error: the exit code is a number
    client.done("hello", "0");
    // @ts-expect-error: DONE needs the exit code
    client.done("hello");
  });

  it("closes gracefully or at once", () => {
    expectTypeOf(client.close()).toEqualTypeOf<Promise<void>>();
    expectTypeOf(client.destroy()).toEqualTypeOf<void>();
    expectTypeOf(client).toExtend<AsyncDisposable>();
  });
});

describe("SupervisorStorage", () => {
  it("opens synchronously and is disposable", () => {
    expectTypeOf(SupervisorStorage.open).toEqualTypeOf<
      (path: string, options?: { mode?: number }) => SupervisorStorage
    >();
    expectTypeOf(storage).toExtend<Disposable>();
    expectTypeOf(storage.db).toEqualTypeOf<Database.Database>();
    expectTypeOf(storage.schemaVersion).toEqualTypeOf<number>();
    expectTypeOf(storage.closed).toEqualTypeOf<boolean>();
    expectTypeOf(storage.close()).toEqualTypeOf<void>();
  });

  it("upgrades only to schema version 1 or 2", () => {
    expectTypeOf(storage.upgrade).parameters.toEqualTypeOf<[version?: 1 | 2]>();
    // @ts-expect-error: there is no schema version 3
    storage.upgrade(3);
  });

  it("types fetcher runs and queue entries", () => {
    expectTypeOf(storage.getFetcherRuns()).toEqualTypeOf<FetcherRun[]>();
    expectTypeOf<FetcherRun>().toEqualTypeOf<{ fetcher: string; runStarted: number; isComplete: boolean }>();
    expectTypeOf(storage.upsertFetcherRun).parameters.toEqualTypeOf<
      [fetcher: string, runStarted: number, isComplete: boolean]
    >();
    expectTypeOf(storage.enqueue).toBeCallableWith("f1", 100, [["hello", "1.0 1.1"]]);
    // @ts-expect-error: an entry is an [attrPath, payload] pair
    storage.enqueue("f1", 100, [["hello"]]);
    expectTypeOf(storage.deleteFetcherRuns).toBeCallableWith([{ fetcher: "f1", runStarted: 100 }]);
  });

  it("dequeues and dispatches jobs or null", () => {
    expectTypeOf(storage.dequeue(0)).toEqualTypeOf<Job | null>();
    expectTypeOf(
      storage.dispatch([{ now: 1 }, { now: 2, finished: { attrPath: "a", exitCode: 0 } }]),
    ).toEqualTypeOf<Array<Job | null>>();
    expectTypeOf(storage.dispatchUnsynced([{ now: 1 }])).toEqualTypeOf<Array<Job | null>>();
    expectTypeOf(storage.syncWal()).toEqualTypeOf<Promise<void>>();
    expectTypeOf<DispatchRequest>().toEqualTypeOf<{
      now: number;
      finished?: { attrPath: string; exitCode: number };
      next?: boolean;
      holder?: string | undefined;
    }>();
    expectTypeOf(storage.finish).parameters.toEqualTypeOf<
      [attrPath: string, finishTime: number, exitCode: number]
    >();
  });
});

describe("readQueueStatus() and jitterHash()", () => {
  it("returns the status figures, with an optional reference time", () => {
    expectTypeOf(readQueueStatus("state.db")).toEqualTypeOf<QueueStatus>();
    expectTypeOf(readQueueStatus).toBeCallableWith("state.db", Date.now());
    expectTypeOf<QueueStatus["oldestWaiting"]>().toEqualTypeOf<{
      attrPath: string;
      fetcher: string;
      lastStarted: number | null;
    } | null>();
    expectTypeOf<QueueStatus["fetcherRuns"]>().toEqualTypeOf<FetcherRunStatus[]>();
    expectTypeOf<QueueStatus["unfinishedJobs"]>().toEqualTypeOf<UnfinishedJob[]>();
    expectTypeOf<UnfinishedJob>().toEqualTypeOf<{
      attrPath: string;
      started: number;
      stale: boolean;
      holder: string | null;
    }>();
    expectTypeOf<FetcherRunStatus>().toEqualTypeOf<{
      fetcher: string;
      runStarted: number;
      isComplete: boolean;
      rows: number;
      pending: number;
    }>();
    expectTypeOf<QueueStatus>().branded.inspect({ foundProps: {} });
  });

  it("hashes a string to a number", () => {
    expectTypeOf(jitterHash).toEqualTypeOf<(s: string) => number>();
  });
});
