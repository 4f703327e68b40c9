import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import { CheckpointError } from "./errors.js";
import { nodeSatisfies } from "./node-range.js";

/** The `better-sqlite3` constructor. */
export type DatabaseConstructor = typeof BetterSqlite3;

/** The `better-sqlite3` majors `SqliteCache` is tested with, as in the package's peer range. */
const supportedSqliteMajors: readonly number[] = [12, 13];

let driver: DatabaseConstructor | undefined;

/**
 * Loads `better-sqlite3`, an optional peer dependency, at the first call only: importing `@x/checkpoint`
 * never loads it, so the package installs and imports without it. The installed version is checked before
 * its native module is loaded, because a driver built for another Node can crash the process on first use.
 *
 * @throws `ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE` when it is not installed or its native module fails to load
 * @throws `ERR_X_CHECKPOINT_SQLITE_VERSION` when the installed major is not supported, or the installed
 * version does not support this Node
 */
export function loadSqlite(): DatabaseConstructor {
  if (driver) return driver;
  const require = createRequire(import.meta.url);
  try {
    checkDriverVersion(require.resolve("better-sqlite3/package.json"));
    driver = require("better-sqlite3") as DatabaseConstructor;
  } catch (cause) {
    if (cause instanceof CheckpointError) throw cause;
    throw new CheckpointError(
      "ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE",
      "SqliteCache needs the optional peer dependency better-sqlite3, which could not be loaded: install it " +
        `(npm install better-sqlite3) next to @x/checkpoint (${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)})`,
      { cause },
    );
  }
  return driver;
}

function checkDriverVersion(packageJsonPath: string): void {
  const { version, engines } = JSON.parse(readFileSync(packageJsonPath, "utf8")) as {
    version: string;
    engines?: { node?: string };
  };
  const major = Number.parseInt(version, 10);
  const supported = supportedSqliteMajors.map((m) => `^${m}.0.0`).join(" || ");
  if (!supportedSqliteMajors.includes(major))
    throw new CheckpointError(
      "ERR_X_CHECKPOINT_SQLITE_VERSION",
      `SqliteCache supports better-sqlite3 ${supported}, but ${version} is installed: ` +
        `install a supported version (npm install better-sqlite3@${supportedSqliteMajors.at(-1)})`,
    );
  const range = engines?.node;
  if (range && !nodeSatisfies(range, process.versions.node))
    throw new CheckpointError(
      "ERR_X_CHECKPOINT_SQLITE_VERSION",
      `better-sqlite3 ${version} needs Node ${range}, and this is Node ${process.versions.node}: ` +
        "run a Node it supports, or install a better-sqlite3 that supports this Node",
    );
}
