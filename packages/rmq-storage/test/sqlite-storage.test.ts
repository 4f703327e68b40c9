import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XError } from "@x/core";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { openSqliteStorage } from "../src/index.js";
import { randomId } from "./fixture.js";
import { expectClosedBehaviour, storageSuite } from "./storage-suite.js";

const dir = mkdtempSync(join(tmpdir(), "rmq-storage-sqlite-"));
let n = 0;
const file = () => join(dir, `db-${n++}.sqlite`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

storageSuite("SQLite storage (file)", async () => {
  const storage = await openSqliteStorage(file());
  return { storage, fresh: () => openSqliteStorage(file()), cleanup: () => storage.close() };
});

storageSuite("SQLite storage (:memory:)", async () => {
  const storage = await openSqliteStorage(":memory:");
  return { storage, fresh: () => openSqliteStorage(":memory:"), cleanup: () => storage.close() };
});

describe("drop()", () => {
  it("commits the queued writes, closes, and deletes the file with its -wal and -shm files", async () => {
    const sub = mkdtempSync(join(dir, "drop-"));
    const path = join(sub, "p.sqlite");
    const storage = await openSqliteStorage(path);
    const write = storage.contentAdd(new Map([[randomId(), 1n]]));
    expect(readdirSync(sub).sort()).toEqual(["p.sqlite", "p.sqlite-shm", "p.sqlite-wal"]);
    await storage.drop();
    expect(await write).toBe(true);
    expect(readdirSync(sub)).toEqual([]);
    const error = await storage.contentGet([randomId()]).catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_RMQ_STORAGE_CLOSED")).toBe(true);
    expect(XError.is(await storage.drop().catch((e: unknown) => e), "ERR_X_RMQ_STORAGE_CLOSED")).toBe(true);
    await storage.close();
  });

  it("closes an in-memory database and touches no file", async () => {
    const storage = await openSqliteStorage(":memory:");
    await storage.drop();
    expect(existsSync(":memory:")).toBe(false);
    expect(XError.is(await storage.drop().catch((e: unknown) => e), "ERR_X_RMQ_STORAGE_CLOSED")).toBe(true);
  });
});

describe("openSqliteStorage", () => {
  it("creates the file, its -wal and -shm 0600 under umask 022, or with fileMode; a file there keeps its mode", async () => {
    const previous = process.umask(0o022);
    onTestFinished(() => {
      process.umask(previous);
    });
    const modes = (path: string) =>
      [path, `${path}-wal`, `${path}-shm`].map((name) => [name, statSync(name).mode & 0o777]);
    for (const [options, expected] of [
      [undefined, 0o600],
      [{ fileMode: 0o640 }, 0o640],
    ] as const) {
      const path = file();
      const storage = await openSqliteStorage(path, options);
      expect(await storage.contentAdd(new Map([[randomId(), 1n]]))).toBe(true);
      expect(modes(path)).toEqual([path, `${path}-wal`, `${path}-shm`].map((name) => [name, expected]));
      await storage.close();
    }
    const existing = file();
    writeFileSync(existing, "");
    chmodSync(existing, 0o644);
    const storage = await openSqliteStorage(existing);
    expect(statSync(existing).mode & 0o777).toBe(0o644);
    await storage.close();
  });

  it("uses WAL, records schema version 1, and shares the file between instances", async () => {
    const path = file();
    const a = await openSqliteStorage(path, { synchronous: "full", busyTimeoutMs: 100 });
    const b = await openSqliteStorage(path);
    const id = randomId();
    expect(await a.contentAdd(new Map([[id, 42n]]))).toBe(true);
    expect(await b.contentGet([id])).toEqual(new Map([[id, 42n]]));
    await a.close();
    await b.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("user_version", { simple: true })).toBe(1);
    db.close();
  });

  it("sets the page cache from cacheSizeBytes, in whole KiB (default 64 MiB)", async () => {
    const pragma = vi.spyOn(Database.prototype, "pragma");
    try {
      for (const [options, expected] of [
        [{}, "cache_size = -65536"],
        [{ cacheSizeBytes: 1_048_576 + 1_023 }, "cache_size = -1024"],
      ] as const) {
        pragma.mockClear();
        await (await openSqliteStorage(":memory:", options)).close();
        expect(pragma.mock.calls.map(([source]) => source)).toContain(expected);
      }
    } finally {
      pragma.mockRestore();
    }
  });

  it("rejects bad options naming them, and unopenable files with ERR_X_RMQ_STORAGE_BACKEND", async () => {
    for (const [options, name] of [
      [{ synchronous: "off" }, "synchronous"],
      [{ busyTimeoutMs: -1 }, "busyTimeoutMs"],
      [{ busyTimeoutMs: 2 ** 31 }, "busyTimeoutMs: 2147483648 (expected a whole number of ms from 0 to"],
      [{ cacheSizeBytes: 65_535 }, "cacheSizeBytes"],
      [{ cacheSizeKiB: 65_536 }, "cacheSizeKiB"],
      [{ walAutocheckpoint: 1.5 }, "walAutocheckpoint"],
      [{ fileMode: 0o1777 }, "fileMode"],
      [{ logger: {} }, "logger"],
      [{ nope: 1 }, "nope"],
    ] as const) {
      const error = await openSqliteStorage(":memory:", options as never).catch((e: unknown) => e);
      expect(XError.is(error, "ERR_X_RMQ_STORAGE_INVALID_OPTION")).toBe(true);
      expect((error as Error).message).toContain(name);
    }
    const error = await openSqliteStorage(join(dir, "missing", "dir", "x.sqlite")).catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_RMQ_STORAGE_BACKEND")).toBe(true);
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it("resolves false, and logs, when a write fails in the database", async () => {
    const path = file();
    const errors: unknown[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (f: unknown) => errors.push(f) };
    const storage = await openSqliteStorage(path, { logger });
    const saboteur = new Database(path);
    saboteur.exec(
      "CREATE TRIGGER fail BEFORE INSERT ON content BEGIN SELECT RAISE(ABORT, 'disk on fire'); END",
    );
    saboteur.close();
    expect(await storage.contentAdd(new Map([[randomId(), 1n]]))).toBe(false);
    expect(errors).toHaveLength(1);
    await storage.close();
  });

  it("rejects a failed read with ERR_X_RMQ_STORAGE_BACKEND and its cause", async () => {
    const path = file();
    const storage = await openSqliteStorage(path);
    const saboteur = new Database(path);
    saboteur.exec("DROP TABLE content");
    saboteur.close();
    const error = await storage.contentGet([randomId()]).catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_RMQ_STORAGE_BACKEND")).toBe(true);
    expect((error as Error).message).toContain("contentGet");
    expect((error as Error).cause).toBeInstanceOf(Error);
    await storage.close();
  });

  it("commits concurrent writes together, yet each write succeeds or fails as a whole", async () => {
    const path = file();
    const storage = await openSqliteStorage(path);
    const saboteur = new Database(path);
    saboteur.exec(
      "CREATE TRIGGER fail BEFORE INSERT ON content WHEN NEW.date = 666 BEGIN SELECT RAISE(ABORT, 'no'); END",
    );
    saboteur.close();
    const [a, b, c, d] = [randomId(), randomId(), randomId(), randomId()];
    const results = await Promise.all([
      storage.contentAdd(new Map([[a, 1n]])),
      storage.contentAdd(
        new Map([
          [b, 2n],
          [c, 666n],
        ]),
      ),
      storage.contentAdd(new Map([[d, 4n]])),
    ]);
    expect(results).toEqual([true, false, true]);
    expect(await storage.contentGet([a, b, c, d])).toEqual(
      new Map([
        [a, 1n],
        [d, 4n],
      ]),
    );
    await storage.close();
  });

  it("closes idempotently and rejects every call afterwards", async () => {
    await expectClosedBehaviour(await openSqliteStorage(":memory:"));
  });
});
