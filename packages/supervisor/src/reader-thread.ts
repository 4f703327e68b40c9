/**
 * The read thread of `QueueReader` (queue-reader.ts): its own read-only connection to the daemon's database,
 * running the queue page's and the metrics' queries, so their scans never stall the daemon's event loop (WAL
 * readers do not block the writer). It imports nothing but Node's modules (the driver is loaded from the path
 * its owner resolved).
 *
 * @module
 */
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type Database from "better-sqlite3";
import type { ReaderData, ReaderReply, ReaderRequest } from "./reader-protocol.js";

const data = workerData as ReaderData;
const port = parentPort!;
const Driver = createRequire(import.meta.url)(data.driver) as typeof Database;
const db = new Driver(data.path, { readonly: true, fileMustExist: true });
db.pragma("busy_timeout = 5000");
const statements = new Map<string, Database.Statement>();
const run = db.transaction((request: ReaderRequest) =>
  request.statements.map(({ sql, params }) => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement.all(...params);
  }),
);

port.on("message", (message: ReaderRequest | "stop") => {
  if (message === "stop") {
    db.close();
    port.close();
    return;
  }
  let reply: ReaderReply;
  try {
    reply = { id: message.id, rows: run(message) };
  } catch (error) {
    reply = { id: message.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
