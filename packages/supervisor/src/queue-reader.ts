import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";
import { startWorker } from "@x/core/internal";
import type Database from "better-sqlite3";
import type { ReaderData, ReaderReply, ReaderRequest, ReadStatement } from "./reader-protocol.js";

/** Runs read-only statements in one snapshot and returns the rows of each. */
export interface SqlReader {
  read(statements: readonly ReadStatement[]): Promise<unknown[][]>;
}

/** Runs the statements in one read transaction on `db`, synchronously: the rows of each. */
export function readNow(db: Database.Database, statements: readonly ReadStatement[]): unknown[][] {
  return db.transaction(() => statements.map(({ sql, params }) => db.prepare(sql).all(...params)))();
}

/** A {@link SqlReader} on `db` itself (for `:memory:` databases, which no other connection can open). */
export function inlineReader(db: Database.Database): SqlReader {
  return { read: async (statements) => readNow(db, statements) };
}

/**
 * Reads a file database from a worker thread with its own read-only connection (reader-thread.ts), so that
 * scans of a large queue never stall the daemon's event loop. Requests run one after another, each in one read
 * transaction.
 */
export class QueueReader implements SqlReader {
  #worker: Worker;
  #next = 0;
  #pending = new Map<number, { resolve: (rows: unknown[][]) => void; reject: (error: Error) => void }>();
  #exited: Promise<void>;
  #stopped = false;

  /** @param path - the database file, already open (and migrated) by the daemon */
  constructor(path: string) {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.#worker = startWorker(import.meta.url, "reader-thread", {
      workerData: { driver, path } satisfies ReaderData,
    });
    this.#worker.unref();
    this.#worker.on("message", (reply: ReaderReply) => {
      const pending = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      if (pending === undefined) return;
      if ("error" in reply) pending.reject(new Error(`queue read failed: ${reply.error}`));
      else pending.resolve(reply.rows);
    });
    this.#worker.on("error", () => {}); // reported by `exit` to the pending requests
    this.#exited = new Promise((resolve) =>
      this.#worker.once("exit", () => {
        for (const { reject } of this.#pending.values()) {
          reject(new Error("the read thread stopped"));
        }
        this.#pending.clear();
        resolve();
      }),
    );
  }

  read(statements: readonly ReadStatement[]): Promise<unknown[][]> {
    if (this.#stopped) {
      return Promise.reject(new Error("the read thread stopped"));
    }
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, statements } satisfies ReaderRequest);
    });
  }

  /** Closes the thread's connection and ends it; pending reads reject. Idempotent. */
  stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#worker.ref();
      this.#worker.postMessage("stop");
    }
    return this.#exited;
  }
}
