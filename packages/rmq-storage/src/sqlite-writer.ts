import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";

/** One statement and the rows of parameters it runs with, in order. */
export type WriteStep = [sql: string, rows: unknown[][]];
/** What one storage write does: its steps commit together or not at all. */
export type Write = WriteStep[];
/** Why a write failed, in a form that crosses threads. */
export interface WriteFailure {
  message: string;
  code?: string;
}

/** Runs one write's steps on `db` (inside the caller's transaction), preparing each statement once. */
export function applyWrite(
  db: Database.Database,
  statements: Map<string, Database.Statement>,
  write: Write,
): void {
  for (const [sql, rows] of write) {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    for (const row of rows) statement.run(row);
  }
}

/**
 * Group commit: runs every write in one `BEGIN IMMEDIATE` transaction; when that fails, runs each write in
 * its own, so every write still commits or fails as a whole.
 *
 * `applyWrite` and this function are also the source of the writer thread (see {@link SqliteWriter}): they
 * must stay self-contained (no imports, no closures over module scope, no named inner functions).
 *
 * @returns per write, `null` when it committed or why it failed
 */
export function applyWrites(
  db: Database.Database,
  statements: Map<string, Database.Statement>,
  writes: Write[],
): Array<WriteFailure | null> {
  try {
    db.transaction(() => {
      for (const write of writes) applyWrite(db, statements, write);
    }).immediate();
    return writes.map(() => null);
  } catch (groupError) {
    if (writes.length === 1) {
      const { message, code } = groupError as { message: string; code?: string };
      return [{ message, code }];
    }
    return writes.map((write) => {
      try {
        db.transaction(() => applyWrite(db, statements, write)).immediate();
        return null;
      } catch (error) {
        const { message, code } = error as { message: string; code?: string };
        return { message, code };
      }
    });
  }
}

/** The writer thread of {@link SqliteWriter}: its own connection, the pragmas it is given, {@link applyWrites}. */
const threadSource = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
${applyWrite.toString()}
${applyWrites.toString()}
const db = new Database(workerData.path, { timeout: workerData.busyTimeoutMs });
for (const pragma of workerData.pragmas) db.pragma(pragma);
db.defaultSafeIntegers(true);
const statements = new Map();
parentPort.on("message", (writes) => {
  if (writes !== null) return parentPort.postMessage(applyWrites(db, statements, writes));
  db.close();
  parentPort.close();
});
`;

/** A write waiting for its commit. */
interface Pending {
  write: Write;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Settles each write of a group with its result from {@link applyWrites}. */
function settle(group: Pending[], results: Array<WriteFailure | null>): void {
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
 * Writes to an SQLite file from a worker thread with a connection of its own, so that commits (B-tree work,
 * WAL writes, checkpoints) run beside the caller's event loop instead of on it. The writes that arrive
 * while a group commits form the next group, so the busier the storage, the larger its transactions. If
 * the thread dies, the writes it held fail and the next write starts a new thread.
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
    worker.postMessage(null);
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
    worker.postMessage(this.#committing.map((pending) => pending.write));
  }

  #thread(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const { path, busyTimeoutMs, pragmas } = this.#options;
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const worker = new Worker(threadSource, {
      eval: true,
      execArgv: [], // the source is CommonJS, whatever module flags the process runs with
      workerData: { driver, path, busyTimeoutMs, pragmas },
    });
    worker.on("message", (results: Array<WriteFailure | null>) => this.#settle(results));
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

  #settle(results: Array<WriteFailure | null>): void {
    const group = this.#committing;
    this.#committing = [];
    settle(group, results);
    this.#send();
  }
}
