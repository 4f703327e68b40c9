/**
 * The original supervisor's worker side, modelled for the benchmarks in its own process:
 * `original-daemon-process.ts <db> <socket>`. It opens the database as the original does (SQLite's defaults:
 * rollback journal `DELETE`, `synchronous = FULL`; `foreign_keys = ON`) and answers each command as the
 * original's handler does, one at a time: `DONE` runs its `finish` (one autocommit) and then, as `READY`
 * does, its `dequeue` (one transaction), and the reply is written after both. Prints `{"event":"ready"}` once
 * listening; SIGTERM stops it.
 */
import { createServer } from "node:net";
import Database from "better-sqlite3";
import { originalStatements } from "../test/original-statements.js";

const [dbPath, socket] = process.argv.slice(2) as [string, string];
const db = new Database(dbPath);
db.pragma("foreign_keys = ON");
const original = originalStatements(db);

/** The original's answer to one command line (without its newline). */
function answer(line: string): string {
  const now = Math.floor(Date.now() / 1000);
  if (line.startsWith("DONE ")) {
    const [, attrPath, exitCode] = line.split(" ");
    original.finish(attrPath!, now, Number(exitCode));
  } else if (line !== "READY") {
    return "";
  }
  const job = original.dequeue(now);
  return job ? `JOB ${job.attrPath} ${job.payload}\n` : "NOJOBS\n";
}

const server = createServer((connection) => {
  let buffer = "";
  connection.setEncoding("utf8");
  connection.on("data", (text: string) => {
    buffer += text;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      connection.write(answer(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
  });
  connection.on("end", () => connection.end());
  connection.on("error", () => {});
});
server.listen(socket, () => process.stdout.write(`${JSON.stringify({ event: "ready" })}\n`));
process.once("SIGTERM", () => {
  server.close();
  db.close();
  process.exit(0);
});
