import { constants, lstatSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { sleep } from "@x/core";
import type { FSWatcher } from "chokidar";
import type { DaemonContext, RejectReason } from "./events.js";
import { completeFileName, type FetcherFileName, parseFetcherFileName } from "./fetcher-name.js";
import { FetcherReader, type LineBatch } from "./fetcher-reader.js";
import type { SupervisorStorage } from "./storage.js";

/** Lines committed per ingestion transaction (a batch may exceed it by one 64 KiB chunk's lines). */
const batchLines = 2_000;
/**
 * Delay of the follow-up read after each change of a followed `.part`, in ms: chokidar drops a second `change`
 * of one file within 50 ms, so the lines such a change brought are read by this later look.
 */
const followUpMs = 60;
/** Logged warnings per fetcher file before they are only counted. */
const warningsPerFile = 100;

/** A fetcher run whose file is in the directory. */
interface TrackedRun extends FetcherFileName {
  /** The file name it is known under now. */
  name: string;
  ino: number;
  /** Open while the file is read: a followed `.part`, or a `.txt` being ingested. */
  reader: FetcherReader | undefined;
  /** A `.part` whose appends are followed. */
  follow: boolean;
  /** Lines read but not committed yet (kept across a failed commit, for the retry). */
  pending: LineBatch | undefined;
  /** The follow-up read armed after the last change of a followed `.part`. */
  followUp: NodeJS.Timeout | undefined;
  rejectedLines: number;
}

type Entry = { kind: "file"; ino: number } | { kind: "missing" } | { kind: "other"; reason: RejectReason };

/**
 * What the entry at `path` is, without following a symbolic link: a link is never a fetcher file, so a file
 * outside the directory cannot be read through one.
 */
function inspect(path: string): Entry {
  try {
    // bigint: a FIFO or socket dropped in the directory must not reach Node's shared stat array (see
    // prepareSocketPath)
    const stat = lstatSync(path, { bigint: true });
    if (stat.isSymbolicLink()) return { kind: "other", reason: "symlink" };
    return stat.isFile() ? { kind: "file", ino: Number(stat.ino) } : { kind: "other", reason: "not-a-file" };
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT"
      ? { kind: "missing" }
      : { kind: "other", reason: "unreadable" };
  }
}

const runKey = (fetcher: string, runStarted: number) => `${fetcher}\u0000${runStarted}`;

/**
 * Keeps the queue in step with the fetcher directory: ingests files at startup and as they appear, follows
 * `.part` files as they grow, completes them on rename to `.txt`, deletes runs whose file disappears.
 * Directory events are handled one at a time, in order; each one re-examines the named entry, so chokidar's
 * events are only hints and a duplicate is harmless.
 */
export class FetcherDirectory {
  readonly dir: string;
  #storage: SupervisorStorage;
  #context: DaemonContext;
  #runs = new Map<string, TrackedRun>();
  #warnedNames = new Set<string>();
  #tasks: Promise<void> = Promise.resolve();
  #watcher: FSWatcher | undefined;
  #closing = new AbortController();

  /**
   * @param dir - the fetcher directory (created, recursively, by {@link start} if missing)
   * @param storage - an upgraded storage
   * @param context - logger, events and counters of the daemon
   */
  constructor(dir: string, storage: SupervisorStorage, context: DaemonContext) {
    this.dir = resolve(dir);
    this.#storage = storage;
    this.#context = context;
  }

  /**
   * Creates the directory if needed, starts watching, ingests the files present in name order, then deletes
   * the runs the database knows that have no file. Resolves when all of that is done.
   */
  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    // Loaded when the watcher starts, not at import: chokidar costs milliseconds to load (issue #31).
    const { watch } = await import("chokidar");
    const watcher = watch(this.dir, {
      ignoreInitial: true,
      depth: 0,
      atomic: false,
      persistent: true,
      ignorePermissionErrors: true,
    });
    this.#watcher = watcher;
    const ready = new Promise<void>((resolveReady) => watcher.once("ready", () => resolveReady()));
    const scan = this.#schedule(async () => {
      await ready;
      await this.#scan();
    });
    watcher.on("all", (event, path) => {
      if (event === "unlinkDir" && resolve(path) === this.dir) {
        this.#context.logger.error(
          { dir: this.dir },
          "the fetcher directory disappeared; the queue is still served",
        );
        return;
      }
      if (dirname(resolve(path)) !== this.dir) return;
      const name = basename(path);
      this.#schedule(() => this.#handle(name));
    });
    watcher.on("error", (error) =>
      this.#context.logger.error({ err: error, dir: this.dir }, "watcher error"),
    );
    await scan;
  }

  /**
   * Reads and commits, synchronously, every line appended to a followed `.part` since it was last read: one
   * `fstat` per file, a read only where it grew. Run before every worker command.
   */
  catchUp(): void {
    for (const run of this.#runs.values()) {
      if (!run.follow || run.reader === undefined) continue;
      if (run.pending === undefined && run.reader.size() === run.reader.position) continue;
      this.#checkShrunk(run);
      while (!this.#step(run, false)) {}
    }
  }

  /** Stops watching, waits for the event being handled, and closes every file; idempotent. */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return this.#tasks;
    this.#closing.abort();
    await this.#watcher?.close();
    await this.#tasks;
    for (const run of this.#runs.values()) this.#closeReader(run);
  }

  #schedule(task: () => Promise<void>): Promise<void> {
    this.#tasks = this.#tasks.then(async () => {
      if (this.#closing.signal.aborted) return;
      try {
        await task();
      } catch (error) {
        if (!this.#closing.signal.aborted) {
          this.#context.logger.error({ err: error, dir: this.dir }, "fetcher directory event failed");
        }
      }
    });
    return this.#tasks;
  }

  async #scan(): Promise<void> {
    const known = new Map(this.#storage.getFetcherRuns().map((r) => [runKey(r.fetcher, r.runStarted), r]));
    const names = readdirSync(this.dir).sort();
    for (const name of names) {
      if (this.#closing.signal.aborted) return;
      const parsed = parseFetcherFileName(name);
      if (parsed.kind !== "fetcher") {
        if (parsed.kind === "bad-run") this.#ignoreEntry(name, "bad-name");
        continue;
      }
      const key = runKey(parsed.fetcher, parsed.runStarted);
      const entry = inspect(join(this.dir, name));
      if (parsed.isComplete && entry.kind === "file" && known.get(key)?.isComplete && !this.#runs.has(key)) {
        this.#runs.set(key, {
          ...parsed,
          name,
          ino: entry.ino,
          reader: undefined,
          follow: false,
          pending: undefined,
          followUp: undefined,
          rejectedLines: 0,
        });
        continue;
      }
      await this.#handle(name);
    }
    const vanished = [...known.entries()].filter(([key]) => !this.#runs.has(key)).map(([, run]) => run);
    if (vanished.length === 0) return;
    this.#storage.deleteFetcherRuns(vanished);
    for (const { fetcher, runStarted } of vanished) {
      this.#context.emit("run", { fetcher, runStarted, change: "deleted" });
    }
  }

  /** Brings the run of the entry `name` in line with what the directory holds now. */
  async #handle(name: string): Promise<void> {
    const parsed = parseFetcherFileName(name);
    if (parsed.kind === "other") return;
    if (parsed.kind === "bad-run") return this.#ignoreEntry(name, "bad-name");
    const key = runKey(parsed.fetcher, parsed.runStarted);
    const entry = inspect(join(this.dir, name));
    const run = this.#runs.get(key);
    if (run !== undefined && run.name === name) {
      if (entry.kind === "file" && entry.ino === run.ino) {
        if (run.follow) await this.#ingestAndFollowUp(run);
        return;
      }
      if (run.follow && (await this.#completeIfRenamed(run))) return;
      await this.#deleteRun(run);
      if (entry.kind === "missing") return;
    } else if (run !== undefined) {
      if (entry.kind !== "file") return;
      if (!parsed.isComplete) {
        this.#warnOnce(name, `ignored: the run is already read from ${run.name}`);
        return;
      }
      if (run.follow && run.ino === entry.ino) {
        await this.#complete(run);
        return;
      }
      this.#closeReader(run);
      this.#runs.delete(key);
    }
    if (entry.kind === "missing") return;
    if (entry.kind === "other") return this.#ignoreEntry(name, entry.reason);
    await this.#add(parsed, name);
  }

  async #add(parsed: FetcherFileName, name: string): Promise<void> {
    let reader: FetcherReader;
    try {
      // O_NOFOLLOW: an entry replaced by a symbolic link since it was inspected is not followed either
      const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
      reader = new FetcherReader(openSync(join(this.dir, name), flags));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      return this.#ignoreEntry(name, code === "ELOOP" ? "symlink" : "unreadable");
    }
    const { fetcher, runStarted, isComplete } = parsed;
    const run: TrackedRun = {
      ...parsed,
      name,
      ino: reader.ino,
      reader,
      follow: !isComplete,
      pending: undefined,
      followUp: undefined,
      rejectedLines: 0,
    };
    this.#runs.set(runKey(fetcher, runStarted), run);
    await this.#retry(() => this.#storage.upsertFetcherRun(fetcher, runStarted, false));
    this.#context.emit("run", { fetcher, runStarted, change: "added" });
    if (isComplete) await this.#complete(run);
    else await this.#ingestAndFollowUp(run);
  }

  /**
   * Reads a followed `.part`'s new lines, then looks again {@link followUpMs} later: a change chokidar dropped
   * (a second write within its 50 ms) is read then, without waiting for a worker's command. A look that finds
   * new lines arms another one; one that finds none ends the chain until the next change. An armed look is not
   * postponed by later changes.
   */
  async #ingestAndFollowUp(run: TrackedRun): Promise<void> {
    const reader = run.reader;
    await this.#ingest(run, false);
    if (run.reader !== reader || reader === undefined || !run.follow || run.followUp !== undefined) return;
    run.followUp = setTimeout(() => {
      run.followUp = undefined;
      this.#schedule(async () => {
        if (run.reader === reader && run.follow && reader.size() !== reader.position) {
          await this.#ingestAndFollowUp(run);
        }
      });
    }, followUpMs);
    run.followUp.unref();
  }

  /** For a followed `.part` that left its name: if it is now its own `.txt`, completes it. */
  async #completeIfRenamed(run: TrackedRun): Promise<boolean> {
    const target = inspect(join(this.dir, completeFileName(run.fetcher, run.runStarted)));
    if (target.kind !== "file" || target.ino !== run.ino) return false;
    await this.#complete(run);
    return true;
  }

  /** Reads the rest of the file (its last line even without `\n`), then marks the run complete. */
  async #complete(run: TrackedRun): Promise<void> {
    run.name = completeFileName(run.fetcher, run.runStarted);
    run.isComplete = true;
    if (!(await this.#ingest(run, true))) return;
    run.follow = false;
    await this.#retry(() => this.#storage.upsertFetcherRun(run.fetcher, run.runStarted, true));
    this.#closeReader(run);
    this.#context.emit("run", { fetcher: run.fetcher, runStarted: run.runStarted, change: "completed" });
  }

  async #deleteRun(run: TrackedRun): Promise<void> {
    this.#closeReader(run);
    this.#runs.delete(runKey(run.fetcher, run.runStarted));
    await this.#retry(() => this.#storage.deleteFetcherRun(run.fetcher, run.runStarted));
    this.#context.emit("run", { fetcher: run.fetcher, runStarted: run.runStarted, change: "deleted" });
  }

  /**
   * Reads and commits the available lines batch by batch, yielding to the event loop between batches.
   * Resolves `true` at the end of the data, `false` when stopped (closing, or the run was dropped).
   */
  async #ingest(run: TrackedRun, final: boolean): Promise<boolean> {
    const reader = run.reader;
    if (reader === undefined) return false;
    this.#checkShrunk(run);
    for (;;) {
      if (this.#closing.signal.aborted || run.reader !== reader) return false;
      let eof: boolean;
      try {
        eof = this.#step(run, final);
      } catch (error) {
        this.#context.logger.error(
          { err: error, file: run.name },
          "committing fetcher lines failed; retrying in 1 s",
        );
        if (!(await this.#pause())) return false;
        continue;
      }
      if (eof) return true;
      await yieldToEventLoop();
    }
  }

  /** Commits the pending batch, or reads and commits the next one. Returns whether the data is exhausted. */
  #step(run: TrackedRun, final: boolean): boolean {
    if (run.pending === undefined) {
      run.pending = run.reader!.readBatch(batchLines, final);
      for (const line of run.pending.rejected) {
        this.#context.stats.linesRejected++;
        run.rejectedLines++;
        if (run.rejectedLines <= warningsPerFile) {
          this.#context.logger.warn(
            { file: run.name, reason: line.reason, sample: line.sample },
            "fetcher line skipped",
          );
        }
        this.#context.emit("reject", {
          kind: "line",
          reason: line.reason,
          file: run.name,
          sample: line.sample,
        });
      }
    }
    const batch = run.pending;
    if (batch.entries.length > 0) {
      this.#storage.enqueue(run.fetcher, run.runStarted, batch.entries);
      this.#context.stats.linesIngested += batch.entries.length;
      this.#context.emit("ingest", {
        fetcher: run.fetcher,
        runStarted: run.runStarted,
        file: run.name,
        lines: batch.entries.length,
      });
    }
    run.pending = undefined;
    return batch.eof;
  }

  #checkShrunk(run: TrackedRun): void {
    const reader = run.reader;
    if (reader === undefined || reader.size() >= reader.position) return;
    this.#context.logger.warn(
      { file: run.name, size: reader.size(), offset: reader.position },
      "fetcher file shrank below the read offset; reading it again from the start",
    );
    reader.rewind();
    run.pending = undefined;
  }

  /** Runs a storage write until it succeeds, waiting 1 s after each failure; gives up only when closing. */
  async #retry(write: () => void): Promise<void> {
    for (;;) {
      try {
        write();
        return;
      } catch (error) {
        this.#context.logger.error({ err: error, dir: this.dir }, "storage write failed; retrying in 1 s");
        if (!(await this.#pause())) throw error;
      }
    }
  }

  async #pause(): Promise<boolean> {
    try {
      await sleep(1_000, { signal: this.#closing.signal });
      return true;
    } catch {
      return false;
    }
  }

  #closeReader(run: TrackedRun): void {
    clearTimeout(run.followUp);
    run.followUp = undefined;
    if (run.reader === undefined) return;
    run.reader.close();
    run.reader = undefined;
    run.pending = undefined;
    if (run.rejectedLines > warningsPerFile) {
      this.#context.logger.warn(
        { file: run.name, rejected: run.rejectedLines },
        `${run.rejectedLines} lines skipped in total (only the first ${warningsPerFile} were logged)`,
      );
    }
  }

  #ignoreEntry(name: string, reason: RejectReason): void {
    if (this.#warnedNames.has(name)) return;
    this.#warnedNames.add(name);
    this.#context.stats.filesIgnored++;
    this.#context.logger.warn({ file: name, reason }, "fetcher-like directory entry ignored");
    this.#context.emit("reject", { kind: "file", reason, file: name, sample: name.slice(0, 200) });
  }

  #warnOnce(name: string, message: string): void {
    if (this.#warnedNames.has(name)) return;
    this.#warnedNames.add(name);
    this.#context.logger.warn({ file: name }, message);
  }
}
