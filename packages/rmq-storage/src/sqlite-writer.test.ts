import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteWriter, type Write } from "./sqlite-writer.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "rmq-storage-writer-"));
  dirs.push(dir);
  return dir;
}

/** A file database with one table `t (v INTEGER)`, and a writer on it. */
function fileWithTable(path: string): void {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (v INTEGER NOT NULL)");
  db.close();
}

const insert = (...values: number[]): Write => [["INSERT INTO t (v) VALUES (?)", values.map((v) => [v])]];
const rows = (path: string) => {
  const db = new Database(path, { readonly: true });
  const out = db.prepare("SELECT v FROM t ORDER BY v").pluck().all();
  db.close();
  return out;
};
const options = (path: string) => ({ path, busyTimeoutMs: 1_000, pragmas: ["synchronous = NORMAL"] });

describe("SqliteWriter", () => {
  it("commits every write queued before close(), then stops its thread", async () => {
    const path = join(tempDir(), "db.sqlite");
    fileWithTable(path);
    const writer = new SqliteWriter(options(path));
    const writes = [writer.write(insert(1, 2)), writer.write(insert(3)), writer.write(insert(4))];
    await writer.close();
    await expect(Promise.all(writes)).resolves.toEqual([undefined, undefined, undefined]);
    expect(rows(path)).toEqual([1, 2, 3, 4]);
  });

  it("fails the writes of a thread that stops with why, and starts a new thread for the next write", async () => {
    const dir = join(tempDir(), "not-yet");
    const path = join(dir, "db.sqlite");
    const writer = new SqliteWriter(options(path));
    // The directory does not exist: the thread cannot open the database and stops.
    await expect(writer.write(insert(1))).rejects.toThrow(/SQLite writer thread stopped/);
    mkdirSync(dir);
    fileWithTable(path);
    await writer.write(insert(2));
    await writer.close();
    expect(rows(path)).toEqual([2]);
  });

  it("rejects a failing write with SQLite's message and code", async () => {
    const path = join(tempDir(), "db.sqlite");
    fileWithTable(path);
    const writer = new SqliteWriter(options(path));
    const error = await writer.write([["INSERT INTO missing (v) VALUES (?)", [[1]]]]).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("no such table: missing");
    expect((error as Error & { code?: string }).code).toBe("SQLITE_ERROR");
    await writer.close();
  });

  it("does not keep an idle process alive", () => {
    const path = join(tempDir(), "db.sqlite");
    const storage = fileURLToPath(new URL("./index.ts", import.meta.url));
    // A program that writes once and never closes its storage must still exit once the write is done.
    const program = `import { openSqliteStorage } from ${JSON.stringify(storage)};
      const s = await openSqliteStorage(${JSON.stringify(path)});
      console.log(await s.contentAdd(new Map([["${"a".repeat(40)}", 1n]])));`;
    const child = spawnSync(
      process.execPath,
      ["--import", "tsx", "--conditions=@x/source", "--input-type=module", "-e", program],
      { encoding: "utf8", timeout: 20_000 },
    );
    expect(child.stderr).toBe("");
    expect(child.stdout).toBe("true\n");
    expect(child.status).toBe(0);
  });
});
