import { writeSync } from "node:fs";
import { writeFileAtomic } from "@x/core/internal";
import { queueRow, staticPageParts } from "./queue-page.js";
import { iterateQueueEntries, readFetcherCycles } from "./queue-view.js";
import { openReadOnly } from "./status.js";

/** Rows written per `write` call by {@link writeQueueHtml}. */
const rowsPerWrite = 1_000;

/**
 * Writes a static queue page, to serve in place of the one the original's `update_queue.py` makes (which lists
 * number, attribute path and payload only, sorted by `last_started`): the cycle time per fetcher, then
 * every waiting entry in dispatch order (position, attribute path, fetcher, payload, waiting since, last
 * started), HTML-escaped. Reads `db` read-only in one snapshot (safe while a daemon runs, a database of the
 * original's too) and streams the rows, so memory does not grow with the queue. The page is written to a new
 * file of a random name beside `out` (created with `O_EXCL | O_NOFOLLOW`: never through a file or link another
 * user put in that directory), mode `0644` before the umask, and renamed over `out`, so a web server never serves
 * half a page and a link at `out` is replaced, not followed.
 *
 * @param db - the supervisor database (schema version 2)
 * @param out - the HTML file to write
 * @param nowMs - the reference time, epoch milliseconds. Default: `Date.now()`.
 * @returns the number of entries written
 * @throws SupervisorError `ERR_X_SUPERVISOR_SCHEMA` when the schema version is not 2; the database's or the
 *   file system's own error otherwise (`out` is then left as it was)
 */
export function writeQueueHtml(db: string, out: string, nowMs = Date.now()): number {
  const connection = openReadOnly(db);
  try {
    let entries = 0;
    const writePage = (file: number) => {
      entries = connection.transaction(() => {
        const cycles = readFetcherCycles(connection, nowMs);
        const waiting = cycles.reduce((sum, c) => sum + c.waiting, 0);
        const [head, foot] = staticPageParts(nowMs, waiting, cycles);
        writeSync(file, head);
        let rows: string[] = [];
        let count = 0;
        for (const entry of iterateQueueEntries(connection, nowMs)) {
          rows.push(queueRow(entry));
          count++;
          if (rows.length === rowsPerWrite) {
            writeSync(file, `${rows.join("\n")}\n`);
            rows = [];
          }
        }
        writeSync(file, `${rows.join("\n")}${foot}`);
        return count;
      })();
    };
    // the page lists no job holders: readable by the web server that serves it
    writeFileAtomic(out, writePage, { mode: 0o644 });
    return entries;
  } finally {
    connection.close();
  }
}
