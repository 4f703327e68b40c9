import { lstatSync, unlinkSync } from "node:fs";
import { chmod } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import type { DaemonContext } from "./events.js";
import type { FetcherDirectory } from "./fetcher-directory.js";
import { sampleBytes } from "./fetcher-line.js";
import { type Command, formatReply, maxCommandBytes, parseCommand } from "./protocol.js";
import type { DispatchRequest, Job, SupervisorStorage } from "./storage.js";

const newline = 0x0a;
/** How long `close()` lets open connections flush their replies before it destroys them, in ms. */
const closeGraceMs = 2_000;

/**
 * A command waiting for the next group commit; `holder` is the subject of the connection's client certificate
 * (TLS only).
 */
type Request = { socket: Socket; command: Exclude<Command, { kind: "reject" }>; holder?: string | undefined };
/** A queued command, or the marker that ends its connection after the replies before it. */
type Queued = Request | { socket: Socket; end: true };

/**
 * Serves the worker line protocol on a Unix socket, and on the connections other listeners hand it
 * ({@link accept}, the TLS listener). Commands are handled in arrival order. The commands that
 * arrive together (in one turn of the event loop) are run in one transaction, a group commit, and their
 * replies are written only after it committed.
 */
export class WorkerServer {
  #server: Server;
  /** Open connections, each with the function that ends it. */
  #connections = new Map<Socket, () => void>();
  #queue: Queued[] = [];
  #flushScheduled = false;
  /** Set while group commits must wait (see {@link pauseWrites}). */
  #paused: Promise<void> | undefined;
  #closing = false;
  #socketIno: bigint | undefined;
  #path: string | undefined;
  #storage: SupervisorStorage;
  #directory: FetcherDirectory;
  #context: DaemonContext;

  constructor(storage: SupervisorStorage, directory: FetcherDirectory, context: DaemonContext) {
    this.#storage = storage;
    this.#directory = directory;
    this.#context = context;
    this.#server = createServer({ allowHalfOpen: true }, (socket) => this.accept(socket));
  }

  /** Listens on `path` (already checked by `prepareSocketPath`) and gives the socket file `mode`. */
  async listen(path: string, mode: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(path, () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
    this.#path = path;
    this.#socketIno = lstatSync(path, { bigint: true }).ino;
    this.#server.on("error", (error) => this.#context.logger.error({ err: error }, "socket server error"));
    await chmod(path, mode);
  }

  /**
   * Stops accepting, drops the commands not yet handled, ends every connection once its written replies are
   * flushed, and resolves when all are closed.
   */
  async close(): Promise<void> {
    this.#closing = true;
    this.#queue = [];
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    const ends = [...this.#connections].map(
      ([socket, stop]) =>
        new Promise<void>((resolve) => {
          socket.once("close", () => resolve());
          const timer = setTimeout(() => socket.destroy(), closeGraceMs);
          timer.unref();
          stop();
        }),
    );
    await Promise.all([...ends, this.#server.listening ? closed : Promise.resolve()]);
  }

  /**
   * Holds group commits until `until` settles; commands keep arriving and queue up meanwhile. Used while
   * the WAL is started over.
   */
  pauseWrites(until: Promise<void>): void {
    const pause = until.finally(() => {
      if (this.#paused === pause) this.#paused = undefined;
      this.#scheduleFlush();
    });
    this.#paused = pause;
  }

  /** Removes the socket file if it is still the one this server created. */
  removeSocketFile(): void {
    if (this.#path === undefined) return;
    try {
      if (lstatSync(this.#path, { bigint: true }).ino === this.#socketIno) unlinkSync(this.#path);
    } catch {
      // already gone
    }
  }

  /**
   * Serves the protocol on a connection another listener accepted, with the same framing, limits and queue
   * as the Unix socket's.
   *
   * @param socket - the connection, opened with `allowHalfOpen`
   * @param holder - who is on the other end (a TLS client certificate's subject), recorded with its jobs
   */
  accept(socket: Socket, holder?: string): void {
    if (this.#closing) {
      socket.destroy();
      return;
    }
    this.#context.stats.connections++;
    let buffered: Buffer = Buffer.alloc(0);
    /** No more commands are read from this connection. */
    let done = false;
    this.#connections.set(socket, () => {
      done = true;
      if (!socket.destroyed) socket.end(() => socket.destroy());
    });
    const enqueue = (line: Buffer): boolean => {
      const command = parseCommand(line);
      if (command.kind === "reject") {
        this.#reject(line, command.reason);
        return false;
      }
      this.#queue.push({ socket, command, holder });
      return true;
    };
    const finish = () => {
      done = true;
      this.#queue.push({ socket, end: true });
      this.#scheduleFlush();
    };
    socket.on("data", (chunk: Buffer) => {
      if (done || this.#closing) return;
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      let start = 0;
      for (let end = buffered.indexOf(newline); end >= 0; end = buffered.indexOf(newline, start)) {
        const line = buffered.subarray(start, end);
        start = end + 1;
        if (line.length > maxCommandBytes) {
          this.#reject(line, "command-too-long");
          return finish();
        }
        if (!enqueue(line)) return finish();
      }
      buffered = buffered.subarray(start);
      if (buffered.length > maxCommandBytes) {
        this.#reject(buffered, "command-too-long");
        return finish();
      }
      this.#scheduleFlush();
    });
    socket.on("end", () => {
      if (done || this.#closing) return;
      if (buffered.length > 0) enqueue(buffered);
      finish();
    });
    socket.on("error", (error) => this.#context.logger.debug({ err: error }, "worker connection error"));
    socket.on("close", () => this.#connections.delete(socket));
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled || this.#paused !== undefined || this.#queue.length === 0) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  /** Runs every queued command in one transaction, then writes the replies and ends what must end. */
  #flush(): void {
    const batch = this.#queue;
    this.#queue = [];
    if (this.#closing || batch.length === 0) return;
    const served = batch.filter((item): item is Request => "command" in item && !item.socket.destroyed);
    const requests: DispatchRequest[] = served.map(({ command, holder }) => ({
      now: Math.floor(Date.now() / 1000),
      finished: command.kind === "done" ? command : undefined,
      holder,
    }));
    let jobs: Array<Job | null>;
    try {
      this.#directory.catchUp();
      jobs = this.#storage.dispatch(requests);
    } catch (error) {
      this.#context.logger.error(
        { err: error },
        "storage failed during worker commands; their connections ended",
      );
      for (const { socket } of batch) this.#connections.get(socket)?.();
      return;
    }
    let next = 0; // served is batch without ends and dead connections, in the same order
    for (const item of batch) {
      if ("end" in item) this.#connections.get(item.socket)?.();
      else if (item === served[next]) {
        this.#reply(item, jobs[next]!, requests[next]!.now);
        next++;
      }
    }
  }

  /** Writes one reply, then counts and reports what it did (after the commit). */
  #reply({ socket, command, holder }: Request, job: Job | null, now: number): void {
    socket.write(formatReply(job));
    const by = holder === undefined ? {} : { holder };
    if (command.kind === "done") {
      this.#context.stats.finished++;
      this.#context.emit("done", {
        attrPath: command.attrPath,
        exitCode: command.exitCode,
        finishedAt: now,
        ...by,
      });
    }
    if (job !== null) {
      this.#context.stats.dispatched++;
      this.#context.emit("job", { ...job, startedAt: now, ...by });
    }
  }

  #reject(line: Buffer, reason: "unknown-command" | "bad-done" | "command-too-long"): void {
    const sample = sampleBytes(line);
    this.#context.stats.commandsRejected++;
    this.#context.logger.warn({ reason, sample }, "worker command rejected; connection ended");
    this.#context.emit("reject", { kind: "command", reason, sample });
  }
}
