import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Logger } from "@x/core";

/** Runs in the worker: its own connection (same SQLite library), PASSIVE checkpoints on a timer. */
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma("busy_timeout = 1000");
let timer;
const tick = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (error) {
    parentPort.postMessage(String(error));
  }
  timer = setTimeout(tick, workerData.intervalMs);
};
timer = setTimeout(tick, workerData.intervalMs);
parentPort.once("message", () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints the WAL of a file database from a worker thread, so the copy of pages into the database file
 * and its `fsync` never stall the daemon's event loop (the daemon's own connection then runs with
 * auto-checkpoints off). If the thread dies, `onFailure` is called once so the daemon can turn its own
 * auto-checkpoints back on.
 */
export class Checkpointer {
  #worker: Worker;
  #exited: Promise<void>;
  #stopped: Promise<void> | undefined;

  /**
   * @param path - the database file (already open, in WAL mode, by the daemon)
   * @param intervalMs - time between checkpoints, in ms
   * @param logger - where checkpoint failures are reported (at debug: the next one retries)
   * @param onFailure - called once if the thread stops without being asked to
   */
  constructor(path: string, intervalMs: number, logger: Logger, onFailure: () => void) {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.#worker = new Worker(workerSource, { eval: true, workerData: { driver, path, intervalMs } });
    this.#worker.unref();
    this.#exited = new Promise((resolve) =>
      this.#worker.once("exit", () => {
        if (this.#stopped === undefined) onFailure();
        resolve();
      }),
    );
    this.#worker.on("message", (message) =>
      logger.debug({ error: message }, "background WAL checkpoint failed"),
    );
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
}
