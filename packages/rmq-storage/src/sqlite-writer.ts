import type { Worker } from "node:worker_threads";
import { startWorker } from "@x/core/internal";
import type Database from "better-sqlite3";
import {
  applyWrites,
  type Write,
  type WriterData,
  type WriterRequest,
  type WriterResults,
} from "./sqlite-writes.js";

export type { Write, WriteStep } from "./sqlite-writes.js";

/** A write waiting for its commit. */
interface Pending {
  write: Write;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Settles each write of a group with its result from {@link applyWrites}. */
function settle(group: Pending[], results: WriterResults): void {
  for (const [i, pending] of group.entries()) {
    const failure = results[i];
    if (failure === null) pending.resolve();
    else {
      const { message, code } = failure ?? { message: "the writer returned no result for this write" };
      pending.reject(Object.assign(new Error(message), { code }));
    }
  }
}

/** Commits writes in groups; see {@link SqliteWriter} and {@link InlineWriter}. */
export interface Writer {
  /** Queues `write` for the next group commit; resolves when it committed, rejects with why it failed. */
  write(write: Write): Promise<void>;
  /** Lets the queued writes commit, then releases what the writer holds. */
  close(): Promise<void>;
}

/**
 * Group commit on the caller's own connection (for `:memory:`, which no other connection can open): the
 * writes queued within one turn of the event loop share one transaction.
 */
export class InlineWriter implements Writer {
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  #queued: Pending[] = [];

  constructor(db: Database.Database) {
    this.#db = db;
  }

  write(write: Write): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queued.push({ write, resolve, reject });
      if (this.#queued.length === 1) setImmediate(() => this.#flush());
    });
  }

  async close(): Promise<void> {
    this.#flush();
  }

  #flush(): void {
    const group = this.#queued;
    this.#queued = [];
    if (group.length > 0)
      settle(
        group,
        applyWrites(
          this.#db,
          this.#statements,
          group.map((p) => p.write),
        ),
      );
  }
}

/** Where and how {@link SqliteWriter} connects. */
export interface SqliteWriterOptions {
  /** The database file (its schema already created). */
  path: string;
  busyTimeoutMs: number;
  /** `PRAGMA` statements for the writer's connection, such as `"synchronous = NORMAL"`. */
  pragmas: string[];
}

/**
 * Writes to an SQLite file from a worker thread (sqlite-writer-thread.ts) with a connection of its own, so
 * that commits (B-tree work, WAL writes, checkpoints) run beside the caller's event loop instead of on it.
 * The writes that arrive while a group commits form the next group, so the busier the storage, the larger
 * its transactions. If the thread dies, the writes it held fail and the next write starts a new thread.
 */
export class SqliteWriter implements Writer {
  readonly #options: SqliteWriterOptions;
  #worker: Worker | undefined;
  #waiting: Pending[] = [];
  #committing: Pending[] = [];
  #sendScheduled = false;
  #idle: Array<() => void> = [];

  constructor(options: SqliteWriterOptions) {
    this.#options = options;
  }

  write(write: Write): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ write, resolve, reject });
      // An idle writer waits for the end of this turn of the event loop, so that the writes made in it
      // (the lanes that one commit released, say) form one group.
      if (this.#committing.length === 0 && !this.#sendScheduled) {
        this.#sendScheduled = true;
        setImmediate(() => {
          this.#sendScheduled = false;
          if (this.#committing.length === 0) this.#send();
        });
      }
    });
  }

  async close(): Promise<void> {
    if (this.#committing.length > 0 || this.#waiting.length > 0)
      await new Promise<void>((resolve) => this.#idle.push(resolve));
    const worker = this.#worker;
    if (worker === undefined) return;
    this.#worker = undefined;
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.ref(); // keep the process alive until the thread has closed its connection
    worker.postMessage(null satisfies WriterRequest);
    await exited;
  }

  /** Sends the waiting writes as the next group; when there are none, lets the process exit and wakes `close`. */
  #send(): void {
    if (this.#waiting.length === 0) {
      this.#worker?.unref();
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#committing = this.#waiting;
    this.#waiting = [];
    const worker = this.#thread();
    worker.ref(); // a commit in progress keeps the process alive until its result arrives
    worker.postMessage(this.#committing.map((pending) => pending.write) satisfies WriterRequest);
  }

  #thread(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const { path, busyTimeoutMs, pragmas } = this.#options;
    // node:module from getBuiltinModule, not an import: its ESM import costs the package import time (#31)
    const driver = process
      .getBuiltinModule("node:module")
      .createRequire(import.meta.url)
      .resolve("better-sqlite3");
    const worker = startWorker(import.meta.url, "sqlite-writer-thread", {
      workerData: { driver, path, busyTimeoutMs, pragmas } satisfies WriterData,
    });
    worker.on("message", (results: WriterResults) => this.#settle(results));
    const lost = (reason: string) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#settle(this.#committing.map(() => ({ message: `the SQLite writer thread stopped: ${reason}` })));
    };
    worker.on("error", (error) => lost(error.message));
    worker.on("exit", (code) => lost(`exit code ${code}`));
    this.#worker = worker;
    return worker;
  }

  #settle(results: WriterResults): void {
    const group = this.#committing;
    this.#committing = [];
    settle(group, results);
    this.#send();
  }
}
