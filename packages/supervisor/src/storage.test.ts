import { join } from "node:path";
import { testTempDir } from "@x/test-support/temp-dir";
import Database from "better-sqlite3";
import { describe, expect, it, onTestFinished } from "vitest";
import { createOriginalDatabase, describeSchema } from "../test/helpers.js";
import { jitterHash } from "./jitter-hash.js";
import { SupervisorStorage } from "./storage.js";

/** A database path in a temporary directory, removed when the current test finishes. */
function fileDb(): string {
  return join(testTempDir("x-supervisor-"), "state.db");
}

/** An in-memory storage upgraded to `version`, closed when the current test finishes. */
function memory(version: 1 | 2 = 2): SupervisorStorage {
  const s = SupervisorStorage.open(":memory:");
  s.upgrade(version);
  onTestFinished(() => s.close());
  return s;
}

const queueRows = (s: SupervisorStorage) =>
  s.db
    .prepare(
      "SELECT fetcher_id, fetcher_run_started, attr_path, payload, is_dequeued, last_started FROM queue ORDER BY attr_path, fetcher_id, fetcher_run_started",
    )
    .all();

describe("schema", () => {
  it.each([1, 2] as const)("version %i cannot be told apart from the original's", (version) => {
    const ours = fileDb();
    const theirs = fileDb();
    const s = SupervisorStorage.open(ours);
    s.upgrade(version);
    s.close();
    createOriginalDatabase(theirs, version);
    const a = new Database(ours, { readonly: true });
    const b = new Database(theirs, { readonly: true });
    try {
      expect(describeSchema(a)).toEqual(describeSchema(b));
      expect(a.pragma("user_version", { simple: true })).toBe(version);
    } finally {
      a.close();
      b.close();
    }
  });

  it("opens a state.db built by the original unchanged and keeps its rows (drop-in)", () => {
    const path = fileDb();
    createOriginalDatabase(path, 2);
    const raw = new Database(path);
    raw.exec(`INSERT INTO fetchers (name) VALUES ('f1');
      INSERT INTO fetcher_runs VALUES (1, 100, 1);
      INSERT INTO log VALUES ('hello', 50, 60, 0);
      INSERT INTO queue (fetcher_id, fetcher_run_started, attr_path, payload, order_jitter) VALUES (1, 100, 'hello', '1 2', 7);
      INSERT INTO queue (fetcher_id, fetcher_run_started, attr_path, payload, order_jitter) VALUES (1, 100, 'new', '3 4', 9);`);
    raw.close();
    const s = SupervisorStorage.open(path);
    s.upgrade();
    expect(s.getFetcherRuns()).toEqual([{ fetcher: "f1", runStarted: 100, isComplete: true }]);
    expect(s.dequeue(1000)).toEqual({ attrPath: "new", payload: "3 4" });
    expect(s.dequeue(1000)).toEqual({ attrPath: "hello", payload: "1 2" });
    expect(s.dequeue(1000)).toBeNull();
    s.close();
  });

  it("sets the pragmas: foreign keys, busy timeout, WAL and synchronous FULL for a file", () => {
    const s = SupervisorStorage.open(fileDb());
    expect(s.db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(s.db.pragma("busy_timeout", { simple: true })).toBe(5000);
    expect(s.db.pragma("journal_mode", { simple: true })).toBe("wal");
    // FULL (2): each commit is synced before it returns, so a dispatch replied to survives a power loss
    expect(s.db.pragma("synchronous", { simple: true })).toBe(2);
    expect(s.schemaVersion).toBe(0);
    s.close();
    s.close();
    expect(s.closed).toBe(true);
  });

  it("migrates 1 → 2: deletes runs and log, ids keep counting up", () => {
    const s = memory(1);
    s.upsertFetcherRun("a", 1, true);
    s.upsertFetcherRun("b", 1, true);
    s.db.exec("INSERT INTO log VALUES ('x', 1, NULL, NULL)");
    s.upgrade();
    expect(s.schemaVersion).toBe(2);
    expect(s.getFetcherRuns()).toEqual([]);
    expect(s.db.prepare("SELECT count(*) AS n FROM log").get()).toEqual({ n: 0 });
    s.upsertFetcherRun("c", 1, true);
    expect(s.db.prepare("SELECT fetcher_id FROM fetchers WHERE name = 'c'").get()).toEqual({ fetcher_id: 3 });
  });

  it("a lower version is a no-op, a newer database throws, a bad version throws", () => {
    const s = memory(2);
    s.upsertFetcherRun("a", 1, true);
    s.upgrade(1);
    expect(s.schemaVersion).toBe(2);
    s.upgrade(2);
    expect(s.getFetcherRuns()).toHaveLength(1);
    expect(() => s.upgrade(3 as 2)).toThrow(
      expect.objectContaining({ code: "ERR_X_SUPERVISOR_BAD_ARGUMENT" }),
    );
    s.db.pragma("user_version = 3");
    expect(() => s.upgrade()).toThrow(expect.objectContaining({ code: "ERR_X_SUPERVISOR_SCHEMA" }));
    expect(s.schemaVersion).toBe(3);
  });

  it("triggers keep queue.last_started equal to log.started whoever writes", () => {
    const s = memory();
    s.db.exec("INSERT INTO log VALUES ('p', 10, NULL, NULL)");
    s.upsertFetcherRun("f", 1, false);
    s.enqueue("f", 1, [
      ["p", "x"],
      ["q", "y"],
    ]);
    expect(s.db.prepare("SELECT attr_path, last_started FROM queue ORDER BY attr_path").all()).toEqual([
      { attr_path: "p", last_started: 10 },
      { attr_path: "q", last_started: null },
    ]);
    s.db.exec(
      "UPDATE log SET started = 20 WHERE attr_path = 'p'; INSERT INTO log VALUES ('q', 30, NULL, NULL)",
    );
    expect(s.db.prepare("SELECT attr_path, last_started FROM queue ORDER BY attr_path").all()).toEqual([
      { attr_path: "p", last_started: 20 },
      { attr_path: "q", last_started: 30 },
    ]);
  });
});

describe("storage operations", () => {
  it("upsertFetcherRun hands out ids 1, 2, 3 in order of first appearance without burning any", () => {
    const s = memory();
    s.upsertFetcherRun("a", 1, false);
    s.upsertFetcherRun("a", 1, true);
    s.upsertFetcherRun("a", 2, false);
    s.upsertFetcherRun("b", 1, false);
    s.upsertFetcherRun("c", 1, false);
    expect(s.db.prepare("SELECT fetcher_id, name FROM fetchers ORDER BY fetcher_id").all()).toEqual([
      { fetcher_id: 1, name: "a" },
      { fetcher_id: 2, name: "b" },
      { fetcher_id: 3, name: "c" },
    ]);
    s.deleteFetcherRun("c", 1);
    s.upsertFetcherRun("c", 1, false);
    expect(s.db.prepare("SELECT fetcher_id FROM fetchers WHERE name = 'c'").get()).toEqual({ fetcher_id: 4 });
  });

  it("upsertFetcherRun updates only is_complete and keeps the run's rows", () => {
    const s = memory();
    s.upsertFetcherRun("f", 1, false);
    s.enqueue("f", 1, [["a", "1"]]);
    s.dequeue(100);
    s.upsertFetcherRun("f", 1, true);
    expect(s.getFetcherRuns()).toEqual([{ fetcher: "f", runStarted: 1, isComplete: true }]);
    expect(queueRows(s)).toEqual([
      {
        fetcher_id: 1,
        fetcher_run_started: 1,
        attr_path: "a",
        payload: "1",
        is_dequeued: 1,
        last_started: 100,
      },
    ]);
  });

  it("enqueue upserts: a conflict changes only the payload, a later duplicate wins", () => {
    const s = memory();
    s.upsertFetcherRun("f", 1, false);
    s.enqueue("f", 1, [
      ["a", "1"],
      ["a", "2"],
    ]);
    expect(s.dequeue(100)).toEqual({ attrPath: "a", payload: "2" });
    s.enqueue("f", 1, [["a", "3"]]);
    expect(queueRows(s)).toEqual([
      {
        fetcher_id: 1,
        fetcher_run_started: 1,
        attr_path: "a",
        payload: "3",
        is_dequeued: 1,
        last_started: 100,
      },
    ]);
    expect(s.db.prepare("SELECT order_jitter FROM queue").get()).toEqual({ order_jitter: -1183465204 });
  });

  it("enqueue keeps text as text and the later duplicate across chunk boundaries", () => {
    const s = memory();
    s.upsertFetcherRun("f", 1, false);
    const entries: Array<[string, string]> = [
      ["123", "0"],
      ["é😀", "ünï"],
      ["dup", "first"],
    ];
    for (let i = 0; i < 6_000; i++) entries.push([`p${i}`, `${i}`]);
    entries.push(["dup", "last"], ["empty", ""]);
    s.enqueue("f", 1, entries);
    const get = s.db.prepare(
      "SELECT payload, typeof(attr_path) AS t, order_jitter AS j FROM queue WHERE attr_path = ?",
    );
    expect(get.get("123")).toEqual({ payload: "0", t: "text", j: jitterHash("123") });
    expect(get.get("é😀")).toEqual({ payload: "ünï", t: "text", j: jitterHash("é😀") });
    expect(get.get("dup")).toMatchObject({ payload: "last" });
    expect(get.get("empty")).toMatchObject({ payload: "" });
    expect(s.db.prepare("SELECT count(*) AS n FROM queue").get()).toEqual({ n: 6_004 });
  });

  it("enqueue: unknown fetcher inserts nothing, unknown run and bad entries throw and insert nothing", () => {
    const s = memory();
    s.enqueue("nobody", 1, [["a", "1"]]);
    expect(queueRows(s)).toEqual([]);
    s.upsertFetcherRun("f", 1, false);
    expect(() => s.enqueue("f", 2, [["a", "1"]])).toThrow(
      expect.objectContaining({ code: "ERR_X_SUPERVISOR_UNKNOWN_RUN" }),
    );
    for (const bad of [
      ["", "1"],
      ["a b", "1"],
      ["a\r", "1"],
      ["a\n", "1"],
      ["a", "1\n"],
      ["a", "1\r"],
    ] as const) {
      expect(() => s.enqueue("f", 1, [["ok", "1"], bad])).toThrow(
        expect.objectContaining({ code: "ERR_X_SUPERVISOR_BAD_ENTRY" }),
      );
    }
    expect(queueRows(s)).toEqual([]);
  });

  it("rejects non-integer times, runs and exit codes", () => {
    const s = memory();
    const bad = expect.objectContaining({ code: "ERR_X_SUPERVISOR_BAD_ARGUMENT" });
    expect(() => s.upsertFetcherRun("f", 1.5, false)).toThrow(bad);
    expect(() => s.enqueue("f", Number.NaN, [])).toThrow(bad);
    expect(() => s.dequeue(1.5)).toThrow(bad);
    expect(() => s.finish("a", 1, 0.5)).toThrow(bad);
    expect(() => s.finish("a", Number.POSITIVE_INFINITY, 0)).toThrow(bad);
    expect(() => s.deleteFetcherRun("f", 2 ** 60)).toThrow(bad);
  });

  it("deleteFetcherRun cascades to queue and fetchers, keeps log; unknown is a no-op", () => {
    const s = memory();
    s.upsertFetcherRun("f", 1, true);
    s.upsertFetcherRun("f", 2, true);
    s.enqueue("f", 1, [["a", "1"]]);
    s.enqueue("f", 2, [["b", "1"]]);
    s.dequeue(10);
    s.deleteFetcherRun("f", 1);
    s.deleteFetcherRun("f", 99);
    s.deleteFetcherRun("zz", 1);
    expect(queueRows(s)).toHaveLength(1);
    expect(s.db.prepare("SELECT count(*) AS n FROM fetchers").get()).toEqual({ n: 1 });
    s.deleteFetcherRuns([{ fetcher: "f", runStarted: 2 }]);
    expect(queueRows(s)).toHaveLength(0);
    expect(s.db.prepare("SELECT count(*) AS n FROM fetchers").get()).toEqual({ n: 0 });
    expect(s.db.prepare("SELECT count(*) AS n FROM log").get()).toEqual({ n: 1 });
  });

  it("finish sets finished and exit code; no log row is a silent no-op", () => {
    const s = memory();
    s.finish("nothing", 5, 0);
    s.upsertFetcherRun("f", 1, true);
    s.enqueue("f", 1, [["a", "1"]]);
    s.dequeue(10);
    s.finish("a", 20, 3);
    expect(s.db.prepare("SELECT * FROM log").all()).toEqual([
      { attr_path: "a", started: 10, finished: 20, exit_code: 3 },
    ]);
  });
});

describe("dispatch (group commit)", () => {
  /** Three runs' worth of rows in two databases, one served by dispatch, one by finish and dequeue calls. */
  const pair = () => {
    const [a, b] = [memory(), memory()];
    for (const s of [a, b]) {
      s.upsertFetcherRun("f", 1, true);
      s.enqueue(
        "f",
        1,
        Array.from({ length: 6 }, (_, i): [string, string] => [`p${i}`, `v${i}`]),
      );
    }
    return [a, b] as const;
  };
  const dump = (s: SupervisorStorage) => ({
    queue: queueRows(s),
    log: s.db.prepare("SELECT * FROM log ORDER BY attr_path").all(),
  });

  it("serves each request in order exactly as finish then dequeue would, in one transaction", () => {
    const [grouped, oneByOne] = pair();
    const first = grouped.dispatch([{ now: 10 }, { now: 10 }, { now: 11 }]);
    expect(first).toEqual([oneByOne.dequeue(10), oneByOne.dequeue(10), oneByOne.dequeue(11)]);
    const [j1, j2] = [first[0]!, first[1]!];
    const second = grouped.dispatch([
      { now: 12, finished: { attrPath: j1.attrPath, exitCode: 0 } },
      { now: 12, finished: { attrPath: j2.attrPath, exitCode: 3 } },
      { now: 12, finished: { attrPath: "never-started", exitCode: 0 } },
    ]);
    oneByOne.finish(j1.attrPath, 12, 0);
    const expected = [oneByOne.dequeue(12)];
    oneByOne.finish(j2.attrPath, 12, 3);
    expected.push(oneByOne.dequeue(12), oneByOne.dequeue(12));
    expect(second).toEqual(expected);
    expect(grouped.dispatch([{ now: 13 }, { now: 13 }])).toEqual([null, null]);
    expect(dump(grouped)).toEqual(dump(oneByOne));
  });

  it("is one transaction: a failure part-way writes nothing", () => {
    const [grouped, oneByOne] = pair();
    const third = [oneByOne.dequeue(10), oneByOne.dequeue(10), oneByOne.dequeue(10)][2]!.attrPath;
    grouped.db.exec(`CREATE TEMP TRIGGER fail_third BEFORE INSERT ON log WHEN NEW.attr_path = '${third}'
      BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
    const before = dump(grouped);
    expect(() => grouped.dispatch([{ now: 10 }, { now: 10 }, { now: 10 }])).toThrow("injected failure");
    expect(dump(grouped)).toEqual(before);
  });

  it("checks every request before writing anything", () => {
    const [s] = pair();
    const before = dump(s);
    const bad = expect.objectContaining({ code: "ERR_X_SUPERVISOR_BAD_ARGUMENT" });
    expect(() => s.dispatch([{ now: 10 }, { now: 10.5 }])).toThrow(bad);
    expect(() => s.dispatch([{ now: 10 }, { now: 10, finished: { attrPath: "p0", exitCode: 0.5 } }])).toThrow(
      bad,
    );
    expect(dump(s)).toEqual(before);
  });
});

describe("dispatchUnsynced and syncWal (commits synced in the background)", () => {
  /** A file storage with six rows queued, closed when the current test finishes. */
  const file = () => {
    const s = SupervisorStorage.open(fileDb());
    onTestFinished(() => s.close());
    s.upgrade();
    s.upsertFetcherRun("f", 1, true);
    s.enqueue(
      "f",
      1,
      Array.from({ length: 6 }, (_, i): [string, string] => [`p${i}`, `v${i}`]),
    );
    return s;
  };

  it("commits what dispatch commits, visible at once to another connection, and leaves synchronous FULL", async () => {
    const [unsynced, synced] = [file(), file()];
    const first = unsynced.dispatchUnsynced([{ now: 10 }, { now: 10 }]);
    expect(first).toEqual(synced.dispatch([{ now: 10 }, { now: 10 }]));
    expect(unsynced.db.pragma("synchronous", { simple: true })).toBe(2);
    const reader = new Database(unsynced.db.name, { readonly: true });
    onTestFinished(() => {
      reader.close();
    });
    expect(reader.prepare("SELECT attr_path FROM log ORDER BY attr_path").pluck().all()).toEqual(
      first.map((job) => job!.attrPath).sort(),
    );
    await unsynced.syncWal();
    const second = unsynced.dispatchUnsynced([
      { now: 11, finished: { attrPath: first[0]!.attrPath, exitCode: 0 } },
    ]);
    expect(second).toEqual(
      synced.dispatch([{ now: 11, finished: { attrPath: first[0]!.attrPath, exitCode: 0 } }]),
    );
    await unsynced.syncWal();
  });

  it("restores synchronous FULL when the transaction fails", () => {
    const s = file();
    s.db.exec(
      "CREATE TEMP TRIGGER fail BEFORE INSERT ON log BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
    );
    expect(() => s.dispatchUnsynced([{ now: 10 }])).toThrow("injected failure");
    expect(s.db.pragma("synchronous", { simple: true })).toBe(2);
  });

  it("is dispatch on a database without a WAL, and syncWal then resolves at once", async () => {
    const s = memory();
    s.upsertFetcherRun("f", 1, true);
    s.enqueue("f", 1, [["a", "1"]]);
    expect(s.dispatchUnsynced([{ now: 10 }, { now: 10 }])).toEqual([{ attrPath: "a", payload: "1" }, null]);
    await s.syncWal();
  });

  it("syncs before anything was written, and keeps its descriptor open until a sync in flight ends", async () => {
    const fresh = SupervisorStorage.open(fileDb());
    await fresh.syncWal();
    fresh.close();
    await fresh.syncWal(); // closed: nothing to sync
    const s = file();
    s.dispatchUnsynced([{ now: 10 }]);
    const syncing = s.syncWal();
    s.close();
    await syncing;
  });
});

describe("dequeue rules", () => {
  it("serves never-started paths first, then by last_started, jitter, attr path, fetcher id", () => {
    const s = memory();
    s.upsertFetcherRun("f", 1, true);
    s.upsertFetcherRun("g", 1, true);
    const paths = ["a", "b", "c", "d", "e"];
    s.enqueue(
      "f",
      1,
      paths.map((p) => [p, "f"]),
    );
    s.enqueue("g", 1, [["a", "g"]]);
    s.db.exec("INSERT INTO log VALUES ('c', 5, 6, 0), ('d', 4, 6, 0)");
    const fresh = ["a", "b", "e"].sort((x, y) => jitterHash(x) - jitterHash(y) || (x < y ? -1 : 1));
    const order: string[] = [];
    for (;;) {
      const job = s.dequeue(100);
      if (!job) break;
      order.push(`${job.attrPath}:${job.payload}`);
      s.finish(job.attrPath, 100, 0);
    }
    const expected: string[] = [];
    for (const p of fresh) {
      expected.push(`${p}:f`);
    }
    // "a" is listed by two fetchers: dispatched once per fetcher; fetcher f (id 1) before g (id 2), but the
    // first dispatch of a sends it to the back (last_started = 100) behind d (4) and c (5).
    expect(order.filter((o) => o.startsWith("a:"))).toEqual(["a:f", "a:g"]);
    expect(order.slice(0, 3).filter((o) => o !== "a:f")).toEqual(expected.filter((o) => o !== "a:f"));
    expect(order.slice(-3)).toEqual(["d:f", "c:f", "a:g"]);
  });

  it("the newest run of a group decides; older runs never count; a new run re-arms", () => {
    const s = memory();
    s.upsertFetcherRun("f", 1, true);
    s.enqueue("f", 1, [["a", "old"]]);
    expect(s.dequeue(100)).toEqual({ attrPath: "a", payload: "old" });
    s.finish("a", 101, 0);
    expect(s.dequeue(102)).toBeNull();
    s.upsertFetcherRun("f", 2, false);
    s.enqueue("f", 2, [["a", "new"]]);
    expect(s.dequeue(103)).toEqual({ attrPath: "a", payload: "new" });
    s.finish("a", 104, 0);
    // a row added later to an older run is never dispatched
    s.enqueue("f", 1, [["late", "x"]]);
    s.enqueue("f", 1, [["a", "older"]]);
    s.upsertFetcherRun("f", 3, false);
    s.enqueue("f", 3, [["b", "3"]]);
    s.enqueue("f", 1, [["b", "1"]]);
    expect(s.dequeue(105)).toEqual({ attrPath: "late", payload: "x" });
    expect(s.dequeue(105)).toEqual({ attrPath: "b", payload: "3" });
    expect(s.dequeue(105)).toBeNull();
    // every row of the dispatched group is marked, across runs
    expect(
      s.db.prepare("SELECT count(*) AS n FROM queue WHERE attr_path = 'b' AND is_dequeued = 0").get(),
    ).toEqual({ n: 0 });
  });

  it("excludes an in-flight path across fetchers for 12 h, then serves it again", () => {
    const s = memory();
    s.upsertFetcherRun("f", 1, true);
    s.upsertFetcherRun("g", 1, true);
    s.enqueue("f", 1, [["a", "f"]]);
    s.enqueue("g", 1, [["a", "g"]]);
    expect(s.dequeue(1000)).toEqual({ attrPath: "a", payload: "f" });
    expect(s.dequeue(1000 + 43_200)).toBeNull();
    expect(s.db.prepare("SELECT is_dequeued FROM queue WHERE fetcher_id = 2").get()).toEqual({
      is_dequeued: 0,
    });
    expect(s.dequeue(1000 + 43_201)).toEqual({ attrPath: "a", payload: "g" });
    expect(s.db.prepare("SELECT DISTINCT last_started FROM queue").all()).toEqual([{ last_started: 44_201 }]);
  });

  it("a DONE (finish) lifts the exclusion at once", () => {
    const s = memory();
    s.upsertFetcherRun("f", 1, true);
    s.upsertFetcherRun("g", 1, true);
    s.enqueue("f", 1, [["a", "f"]]);
    s.enqueue("g", 1, [["a", "g"]]);
    s.dequeue(1000);
    s.finish("a", 1001, 1);
    expect(s.dequeue(1001)).toEqual({ attrPath: "a", payload: "g" });
    expect(s.db.prepare("SELECT * FROM log").get()).toEqual({
      attr_path: "a",
      started: 1001,
      finished: null,
      exit_code: null,
    });
  });
});
