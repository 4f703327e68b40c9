/**
 * The checkpoint thread of `Checkpointer` (checkpointer.ts): its own connection (same SQLite library),
 * PASSIVE checkpoints on a timer, a report when the WAL has grown past its cap, and a RESTART checkpoint
 * when asked. It imports nothing but Node's modules (the driver is loaded from the path its owner
 * resolved), so that it starts fast.
 *
 * @module
 */
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type Database from "better-sqlite3";
import type { CheckpointerCommand, CheckpointerData, CheckpointerReport } from "./checkpointer-protocol.js";

/** The row `PRAGMA wal_checkpoint` returns: whether a reader or writer blocked it, and the WAL's frames. */
interface CheckpointResult {
  busy: number;
  log: number;
}

const data = workerData as CheckpointerData;
const port = parentPort!;
const report = (message: CheckpointerReport) => port.postMessage(message);
const Driver = createRequire(import.meta.url)(data.driver) as typeof Database;
const db = new Driver(data.path, { fileMustExist: true });
db.pragma("busy_timeout = " + data.lockWaitMs);
const pageSize = db.pragma("page_size", { simple: true }) as number;
const walBytes = (frames: number) => frames * (pageSize + 24);
// The WAL size that asks for a restart: the cap, doubled after each restart a reader prevented, back to
// the cap after a restart that worked.
let threshold = data.walCapBytes;
let overCapReported = false;
let timer: NodeJS.Timeout;
const tick = () => {
  try {
    const [{ log }] = db.pragma("wal_checkpoint(PASSIVE)") as [CheckpointResult];
    if (!overCapReported && walBytes(log) > threshold) {
      overCapReported = true;
      report({ kind: "over-cap", walBytes: walBytes(log) });
    }
  } catch (error) {
    report({ kind: "failed", error: String(error) });
  }
  timer = setTimeout(tick, data.intervalMs);
};
timer = setTimeout(tick, data.intervalMs);
port.on("message", (message: CheckpointerCommand) => {
  if (message === "restart") {
    const started = performance.now();
    let restarted = false;
    try {
      const [{ busy, log }] = db.pragma("wal_checkpoint(RESTART)") as [CheckpointResult];
      restarted = busy === 0;
      threshold = restarted ? data.walCapBytes : 2 * Math.max(threshold, walBytes(log));
    } catch (error) {
      report({ kind: "failed", error: String(error) });
    }
    overCapReported = false;
    report({ kind: "restarted", restarted, ms: performance.now() - started });
    return;
  }
  clearTimeout(timer);
  db.close();
  port.close();
});
