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

/**
 * What tells two schemas apart: every table of `main` with its columns, foreign keys and indexes, and the
 * trigger names. `except` leaves tables out.
 */
export function describeSchema(db: Database.Database, except: string[] = []) {
  const tables = (db.pragma("table_list") as Array<{ name: string; schema: string }>)
    .filter((t) => t.schema === "main" && !except.includes(t.name))
    .sort((a, b) => a.name.localeCompare(b.name));
  return {
    tables,
    details: tables.map((t) => ({
      info: db.pragma(`table_info(${t.name})`),
      xinfo: db.pragma(`table_xinfo(${t.name})`),
      fks: db.pragma(`foreign_key_list(${t.name})`),
      indexes: (db.pragma(`index_list(${t.name})`) as Array<{ name: string }>)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((i) => ({ ...i, xinfo: db.pragma(`index_xinfo(${i.name})`) })),
    })),
    triggers: db
      .prepare("SELECT name, tbl_name FROM sqlite_schema WHERE type = 'trigger' ORDER BY name")
      .all(),
  };
}
