import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { testTempDir } from "@x/test-support/temp-dir";
import type BetterSqlite3 from "better-sqlite3";
import { beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { at, expectCode, recordingDependent } from "../test/helpers.js";
import { Checkpoint, Dependency, SqliteCache } from "./index.js";

const Database = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;

let dir: string;
let file: string;

/** A cache on this test's file, closed when the test finishes (before its directory is removed). */
function open(path = file): SqliteCache {
  const cache = new SqliteCache(path);
  onTestFinished(() => cache.close());
  return cache;
}

// Each test's directory is removed when the test finishes. Registered here, before the test opens any
// cache in it, the removal runs after those caches are closed: Vitest runs `onTestFinished` callbacks in
// reverse order of registration.
beforeEach(() => {
  dir = testTempDir("x-checkpoint-sqlite-");
  file = join(dir, "cache.db");
});

const rich = {
  when: at(0),
  big: -(2n ** 80n),
  map: new Map<unknown, unknown>([[1, new Set(["a"])]]),
  bytes: new Float64Array([1.5, -0]),
  nested: { list: [1, "two", null, undefined, { deep: true }] },
};

describe("SqliteCache", () => {
  it("round-trips rich values, undefined, null and primitives; a missing key is undefined", () => {
    const cache = open();
    for (const [key, value] of Object.entries({
      rich,
      undef: undefined,
      nil: null,
      n: 42,
      s: "text",
      b: false,
    })) {
      cache.set(key, value);
      expect(cache.get(key)).toEqual(value);
      expect(cache.has(key)).toBe(true);
    }
    expect(cache.get("missing")).toBeUndefined();
    expect(cache.has("missing")).toBe(false);
  });

  it("replaces a value, deletes a key, and deleting a missing key is fine", () => {
    const cache = open();
    cache.set("k", 1);
    cache.set("k", 2);
    expect(cache.get("k")).toBe(2);
    expect(cache.delete("k")).toBe(true);
    expect(cache.delete("k")).toBe(false);
    expect(cache.has("k")).toBe(false);
  });

  it("values survive close() and reopening the same path", async () => {
    const cache = open();
    cache.set("rich", rich);
    await cache.close();
    expect(open().get("rich")).toEqual(rich);
  });

  it("accepts :memory:", () => {
    const cache = open(":memory:");
    cache.set("k", rich);
    expect(cache.get("k")).toEqual(rich);
  });

  it("stores node:v8 serialisations in cache(key TEXT PRIMARY KEY, value BLOB NOT NULL), in WAL mode", async () => {
    const cache = open();
    cache.set("k", rich);
    const raw = new Database(file, { readonly: true });
    try {
      const { sql } = raw.prepare("SELECT sql FROM sqlite_master WHERE name = 'cache'").get() as {
        sql: string;
      };
      expect(sql.replace(/\s+/g, " ")).toContain("cache (key TEXT PRIMARY KEY, value BLOB NOT NULL)");
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
      const { deserialize } = await import("node:v8");
      const stored = raw.prepare("SELECT value FROM cache WHERE key = 'k'").pluck().get() as Buffer;
      expect(deserialize(stored)).toEqual(rich);
    } finally {
      raw.close();
    }
  });

  it("waits for a lock held by another connection instead of failing (busy_timeout)", async () => {
    const cache = open();
    cache.set("k", 0);
    const script = `
      const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve("better-sqlite3"))});
      const db = new Database(${JSON.stringify(file)});
      db.exec("BEGIN IMMEDIATE");
      db.prepare("UPDATE cache SET value = value WHERE key = 'k'").run();
      process.stdout.write("locked\\n");
      setTimeout(() => { db.exec("COMMIT"); db.close(); }, 500);
    `;
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    // Without busy_timeout this would throw SQLITE_BUSY at once: the other connection holds the write lock.
    cache.set("k", 1);
    expect(cache.get("k")).toBe(1);
    await new Promise((resolve) => child.once("exit", resolve));
  });

  it("a value that cannot be stored throws ERR_X_CHECKPOINT_CACHE_VALUE and stores nothing", async () => {
    const cache = open();
    cache.set("k", "kept");
    for (const value of [() => {}, Symbol("s"), { nested: { fn: () => {} } }]) {
      const error = await expectCode(() => cache.set("k", value), "ERR_X_CHECKPOINT_CACHE_VALUE");
      expect(error.message).toContain('"k"');
      await expectCode(() => cache.set("new", value), "ERR_X_CHECKPOINT_CACHE_VALUE");
    }
    expect(cache.get("k")).toBe("kept");
    expect(cache.has("new")).toBe(false);
  });

  it("close() is idempotent, [Symbol.asyncDispose] calls it, and every method then throws ERR_X_CHECKPOINT_CACHE_CLOSED", async () => {
    const cache = new SqliteCache(file);
    await cache.close();
    await cache.close();
    for (const use of [
      () => cache.get("k"),
      () => cache.set("k", 1),
      () => cache.has("k"),
      () => cache.delete("k"),
    ]) {
      await expectCode(use, "ERR_X_CHECKPOINT_CACHE_CLOSED");
    }
    const disposed = new SqliteCache(file);
    await disposed[Symbol.asyncDispose]();
    await expectCode(() => disposed.get("k"), "ERR_X_CHECKPOINT_CACHE_CLOSED");
    let outOfScope: SqliteCache | undefined;
    {
      await using scoped = new SqliteCache(file);
      scoped.set("scoped", true);
      outOfScope = scoped;
    }
    await expectCode(() => outOfScope?.get("scoped"), "ERR_X_CHECKPOINT_CACHE_CLOSED");
  });

  it("a path that cannot be opened as a database throws ERR_X_CHECKPOINT_CACHE_OPEN with the driver's error", async () => {
    const missing = await expectCode(
      () => new SqliteCache(join(dir, "no", "such", "dir.db")),
      "ERR_X_CHECKPOINT_CACHE_OPEN",
    );
    expect(missing.cause).toBeInstanceOf(Error);
    const text = join(dir, "notes.txt");
    writeFileSync(text, "this is not a database\n".repeat(100));
    const notSqlite = await expectCode(() => new SqliteCache(text), "ERR_X_CHECKPOINT_CACHE_OPEN");
    expect((notSqlite.cause as Error).message).toMatch(/not a database/);
  });

  it("shows an empty or blank path quoted in its refusal", async () => {
    const empty = await expectCode(() => new SqliteCache(""), "ERR_X_CHECKPOINT_INVALID_OPTION");
    expect(empty.message).toBe('invalid option path: "" (expected a file path or ":memory:")');
    const blank = await expectCode(() => new SqliteCache(" \t"), "ERR_X_CHECKPOINT_INVALID_OPTION");
    expect(blank.message).toContain('invalid option path: " \\t"');
    const other = await expectCode(() => new SqliteCache(7 as never), "ERR_X_CHECKPOINT_INVALID_OPTION");
    expect(other.message).toContain("invalid option path: 7");
  });

  describe("corrupted or foreign values", () => {
    function tamper(sql: string): void {
      const raw = new Database(file);
      raw.prepare(sql).run();
      raw.close();
    }

    it("a blob that does not deserialise is ERR_X_CHECKPOINT_CORRUPT naming the key", async () => {
      const cache = open();
      cache.set("__c__state", { offset: 1 });
      tamper("UPDATE cache SET value = X'DEADBEEF' WHERE key = '__c__state'");
      const error = await expectCode(() => cache.get("__c__state"), "ERR_X_CHECKPOINT_CORRUPT");
      expect(error.message).toContain('"__c__state"');
      expect(error.cause).toBeDefined();
    });

    it("a text value written by something else (an older layout) is ERR_X_CHECKPOINT_CORRUPT naming the key", async () => {
      const cache = open();
      tamper(`INSERT INTO cache (key, value) VALUES ('__c_d_checkpoint_marker', '2025-01-01T10:00:00')`);
      const error = await expectCode(() => cache.get("__c_d_checkpoint_marker"), "ERR_X_CHECKPOINT_CORRUPT");
      expect(error.message).toContain('"__c_d_checkpoint_marker"');
    });

    it("a checkpoint restarted on a corrupted file fails with ERR_X_CHECKPOINT_CORRUPT, never a raw exception", async () => {
      const cache = open();
      const cp = new Checkpoint("c", { dependencies: [new Dependency("d")], cache });
      await cp.checkPulse(at(0), { offset: 1 });
      await cache.close();
      tamper("UPDATE cache SET value = X'FF0F6F2201' WHERE key = '__c_d_checkpoint_state'");
      for (const restart of [
        () => new Checkpoint("c", { dependencies: [new Dependency("d")], cache: open() }),
        () => Checkpoint.open("c", { dependencies: [new Dependency("d")], cache: open() }),
      ]) {
        const error = await expectCode(restart, "ERR_X_CHECKPOINT_CORRUPT");
        expect(error.message).toContain('"__c_d_checkpoint_state"');
      }
    });
  });

  it("a checkpoint on a file resumes after a restart in the middle of a downtime", async () => {
    const dependent = recordingDependent();
    const first = open();
    const before = new Checkpoint("orders", { dependencies: [new Dependency("prices")], cache: first });
    await before.checkPulse(at(0), { offset: 10n });
    await before.checkPulse(at(11), { offset: 11n });
    await first.close();

    const recovered: unknown[] = [];
    const after = new Checkpoint("orders", {
      dependent,
      dependencies: [new Dependency("prices")],
      cache: open(),
      recoveryCallback: (_cp, dep) => recovered.push(dep.checkpointState),
    });
    expect(dependent.log).toEqual(["pause"]);
    expect(after.state).toEqual({ offset: 11n });
    expect(after.stateMarker).toEqual(at(11));
    await after.heartbeat(at(12));
    expect(recovered).toEqual([{ offset: 11n }]);
    expect(dependent.log).toEqual(["pause", "resume"]);
  });

  it("offsets checkpointed at detection are a copy: the same before and after a restart, whatever the caller mutates", async () => {
    const dependent = recordingDependent();
    const first = open();
    const before = new Checkpoint("orders", {
      dependent,
      dependencies: [new Dependency("prices")],
      cache: first,
    });
    const offsets = { p0: 100n, p1: 7n };
    await before.checkPulse(at(0), { offsets });
    await before.heartbeat(at(1));
    offsets.p0 = 112n; // the caller reuses its offsets object: the checkpoint holds its own copies
    await before.checkPulse(at(12), { offsets });
    expect(before.dependency("prices").isDown).toBe(true);
    await before.heartbeat(at(2)); // a late price: snapshots the offsets at detection
    offsets.p0 = 999n;
    offsets.p1 = 999n;
    const atDetection = { offsets: { p0: 112n, p1: 7n } };
    const live = before.dependency("prices").checkpointState;
    expect(live).toEqual(atDetection);
    expect(live).not.toBe(before.state);
    expect((live as typeof atDetection).offsets).not.toBe(offsets);
    await first.close();

    const recovered: unknown[] = [];
    const after = new Checkpoint("orders", {
      dependent,
      dependencies: [new Dependency("prices")],
      cache: open(),
      recoveryCallback: (_cp, dep) => recovered.push(structuredClone(dep.checkpointState)),
    });
    expect(after.dependency("prices").checkpointState).toEqual(atDetection);
    await after.heartbeat(at(13));
    expect(recovered).toEqual([atDetection]);
  });
});
