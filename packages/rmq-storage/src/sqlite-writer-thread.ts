/**
 * The writer thread of `SqliteWriter` (sqlite-writer.ts): its own connection, the pragmas it is given, and
 * group commits with `applyWrites`, one per {@link WriterRequest}. It imports nothing but Node's modules and
 * sqlite-writes.ts (the driver is loaded from the path its owner resolved), so that it starts fast; the
 * `.ts` specifier lets Node run this file from the sources too (see `startWorker` in `@x/core/internal`).
 *
 * @module
 */
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type Database from "better-sqlite3";
import { applyWrites, type WriterData, type WriterRequest, type WriterResults } from "./sqlite-writes.ts";

const { driver, path, busyTimeoutMs, pragmas } = workerData as WriterData;
const port = parentPort!;
const Driver = createRequire(import.meta.url)(driver) as typeof Database;
const db = new Driver(path, { timeout: busyTimeoutMs });
for (const pragma of pragmas) db.pragma(pragma);
db.defaultSafeIntegers(true);
const statements = new Map<string, Database.Statement>();
port.on("message", (writes: WriterRequest) => {
  if (writes !== null) port.postMessage(applyWrites(db, statements, writes) satisfies WriterResults);
  else {
    db.close();
    port.close();
  }
});
