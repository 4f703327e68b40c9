import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

/** A fresh temporary directory, removed by the returned `cleanup`. */
export function tempDir(prefix = "x-supervisor-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Builds a database with the original supervisor's own SQL (test/fixtures), up to `version`. */
export function createOriginalDatabase(path: string, version: 1 | 2 = 2): void {
  const db = new Database(path);
  try {
    db.exec(readFileSync(new URL("./fixtures/original-schema-v1.sql", import.meta.url), "utf8"));
    if (version === 2) {
      db.exec(readFileSync(new URL("./fixtures/original-schema-v2.sql", import.meta.url), "utf8"));
    }
    db.pragma(`user_version = ${version}`);
  } finally {
    db.close();
  }
}

/** Runs `query` on a short-lived read-only connection to `path` (another process's database). */
export function readDb<T>(path: string, query: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return query(db);
  } finally {
    db.close();
  }
}
