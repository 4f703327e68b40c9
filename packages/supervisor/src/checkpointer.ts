import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Logger } from "@x/core";

/**
 * Runs in the worker: its own connection (same SQLite library), PASSIVE checkpoints on a timer, a report
 * when the WAL has grown past its cap, and a RESTART checkpoint when asked (see {@link Checkpointer}).
 */
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma("busy_timeout = " + workerData.lockWaitMs);
const pageSize = db.pragma("page_size", { simple: true });
const walBytes = (frames) => frames * (pageSize + 24);
// The WAL size that asks for a restart: the cap, doubled after each restart a reader prevented, back to
// the cap after a restart that worked.
let threshold = workerData.walCapBytes;
let overCapReported = false;
let timer;
const tick = () => {
  try {
    const [{ log }] = db.pragma("wal_checkpoint(PASSIVE)");
    if (!overCapReported && walBytes(log) > threshold) {
      overCapReported = true;
      parentPort.postMessage({ kind: "over-cap", walBytes: walBytes(log) });
    }
  } catch (error) {
    parentPort.postMessage({ kind: "failed", error: String(error) });
  }
  timer = setTimeout(tick, workerData.intervalMs);
};
timer = setTimeout(tick, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message === "restart") {
    const started = performance.now();
    let restarted = false;
    try {
      const [{ busy, log }] = db.pragma("wal_checkpoint(RESTART)");
      restarted = busy === 0;
      threshold = restarted ? workerData.walCapBytes : 2 * Math.max(threshold, walBytes(log));
    } catch (error) {
      parentPort.postMessage({ kind: "failed", error: String(error) });
    }
    overCapReported = false;
    parentPort.postMessage({ kind: "restarted", restarted, ms: performance.now() - started });
    return;
  }
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

/** What the checkpoint thread reports. */
type Report =
  | { kind: "failed"; error: string }
  | { kind: "over-cap"; walBytes: number }
  | { kind: "restarted"; restarted: boolean; ms: number };

/** Options of {@link Checkpointer}. */
export interface CheckpointerOptions {
  /** The database file (already open, in WAL mode, by the daemon). */
  path: string;
  /** Time between checkpoints, in ms. */
  intervalMs: number;
  /** The WAL size past which the WAL is started over, in bytes (see {@link Checkpointer}). */
  walCapBytes: number;
  /**
   * How long a checkpoint waits for a lock, and a RESTART for the readers of older snapshots, in ms. A
   * RESTART that a reader prevents (a long `VACUUM INTO`, say) doubles the WAL size at which the next one
   * is tried, so a long reader costs a few pauses, not one per checkpoint (the cap applies again after a
   * RESTART that worked).
   */
  lockWaitMs: number;
  /** Where checkpoint failures (at debug: the next one retries) and WAL restarts (at info) are reported. */
  logger: Logger;
  /**
   * Called when the WAL must be started over: the caller starts no write transaction until `until` settles
   * (a RESTART checkpoint then needs no lock wait, and the next write starts the WAL over).
   */
  pauseWrites: (until: Promise<void>) => void;
  /** Called once if the thread stops without being asked to. */
  onFailure: () => void;
}

/**
 * Checkpoints the WAL of a file database from a worker thread, so the copy of pages into the database file
 * and its `fsync` never stall the daemon's event loop (the daemon's own connection then runs with
 * auto-checkpoints off). If the thread dies, `onFailure` is called once so the daemon can turn its own
 * auto-checkpoints back on.
 *
 * A writer starts the WAL over only when a checkpoint has copied all of it and no commit came in since, so
 * under commits that never pause for as long as a checkpoint takes, PASSIVE checkpoints alone would let
 * the WAL grow for as long as the load lasts. Past `walCapBytes` the writes are therefore paused (through
 * `pauseWrites`) for one RESTART checkpoint, after which the next write starts the WAL over and cuts the
 * file back to its `journal_size_limit`.
 */
export class Checkpointer {
  #worker: Worker;
  #exited: Promise<void>;
  #stopped: Promise<void> | undefined;
  /** Ends the current write pause, if any. */
  #resumeWrites: (() => void) | undefined;

  constructor({
    path,
    intervalMs,
    walCapBytes,
    lockWaitMs,
    logger,
    pauseWrites,
    onFailure,
  }: CheckpointerOptions) {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.#worker = new Worker(workerSource, {
      eval: true,
      execArgv: [], // the source is CommonJS, whatever module flags the process runs with
      workerData: { driver, path, intervalMs, walCapBytes, lockWaitMs },
    });
    this.#worker.unref();
    this.#exited = new Promise((resolve) =>
      this.#worker.once("exit", () => {
        this.#resume();
        if (this.#stopped === undefined) onFailure();
        resolve();
      }),
    );
    let overCapBytes = 0;
    this.#worker.on("message", (report: Report) => {
      if (report.kind === "failed") {
        logger.debug({ error: report.error }, "background WAL checkpoint failed");
      } else if (report.kind === "over-cap") {
        if (this.#stopped !== undefined) return;
        overCapBytes = report.walBytes;
        pauseWrites(new Promise((resolve) => (this.#resumeWrites = resolve)));
        this.#worker.postMessage("restart");
      } else {
        this.#resume();
        logger.info(
          { walBytes: overCapBytes, restarted: report.restarted, pausedMs: Math.round(report.ms) },
          "WAL grew past its cap under sustained writes; writes paused for a RESTART checkpoint",
        );
      }
    });
    this.#worker.on("error", (error) => logger.warn({ err: error }, "background WAL checkpointer stopped"));
  }

  /** Stops the thread after its current checkpoint and closes its connection; idempotent. */
  stop(): Promise<void> {
    if (this.#stopped === undefined) {
      this.#worker.ref(); // keep the process alive until the thread has closed its connection
      this.#worker.postMessage("stop");
      this.#stopped = this.#exited;
    }
    return this.#stopped;
  }

  #resume(): void {
    this.#resumeWrites?.();
    this.#resumeWrites = undefined;
  }
}
