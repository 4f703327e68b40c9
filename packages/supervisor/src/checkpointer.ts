import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";
import type { Logger } from "@x/core";
import { startWorker } from "@x/core/internal";
import type { CheckpointerCommand, CheckpointerData, CheckpointerReport } from "./checkpointer-protocol.js";

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
  /** Called after each write pause (see `pauseWrites`) with its length in ms. */
  onPause?: (pausedMs: number) => void;
}

/**
 * Checkpoints the WAL of a file database from a worker thread (checkpointer-thread.ts), so the copy of pages
 * into the database file and its `fsync` never stall the daemon's event loop (the daemon's own connection
 * then runs with auto-checkpoints off). If the thread dies, `onFailure` is called once so the daemon can
 * turn its own auto-checkpoints back on.
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
    onPause,
  }: CheckpointerOptions) {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    // The thread runs with no execArgv (see startWorker): the daemon's module flags never reach it.
    this.#worker = startWorker(import.meta.url, "checkpointer-thread", {
      workerData: { driver, path, intervalMs, walCapBytes, lockWaitMs } satisfies CheckpointerData,
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
    this.#worker.on("message", (report: CheckpointerReport) => {
      if (report.kind === "failed") {
        logger.debug({ error: report.error }, "background WAL checkpoint failed");
      } else if (report.kind === "over-cap") {
        if (this.#stopped !== undefined) return;
        overCapBytes = report.walBytes;
        pauseWrites(new Promise((resolve) => (this.#resumeWrites = resolve)));
        this.#worker.postMessage("restart" satisfies CheckpointerCommand);
      } else {
        this.#resume();
        onPause?.(report.ms);
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
      this.#worker.postMessage("stop" satisfies CheckpointerCommand);
      this.#stopped = this.#exited;
    }
    return this.#stopped;
  }

  #resume(): void {
    this.#resumeWrites?.();
    this.#resumeWrites = undefined;
  }
}
