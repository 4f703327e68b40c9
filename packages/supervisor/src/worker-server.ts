import { lstatSync, unlinkSync } from "node:fs";
import type { Server, Socket } from "node:net";
import type { DaemonContext } from "./events.js";
import type { FetcherDirectory } from "./fetcher-directory.js";
import { sampleBytes } from "./fetcher-line.js";
import { type Command, formatReply, maxCommandBytes, parseCommand } from "./protocol.js";
import { listenWithFinalMode } from "./socket-listen.js";
import type { DispatchRequest, Job, SupervisorStorage } from "./storage.js";

const newline = 0x0a;
/** How long `close()` lets open connections flush their replies before it destroys them, in ms. */
const closeGraceMs = 2_000;

/**
 * A command waiting for the next group commit; `holder` is the subject of the connection's client certificate
 * (TLS only).
 */
type Request = {
  socket: Socket;
  connection: Connection;
  command: Exclude<Command, { kind: "reject" }>;
  /** The command's length in bytes. */
  line: number;
  holder?: string | undefined;
  /** When the command was read, `performance.now()`. */
  receivedAt: number;
};
/** A queued command, or the marker that ends its connection after the replies before it. */
type Queued = Request | { socket: Socket; end: true };

/** What the server keeps per open connection. */
interface Connection {
  socket: Socket;
  holder: string | undefined;
  /** Bytes read and not yet parsed: complete commands held back while the connection is blocked, and a tail. */
  buffered: Buffer;
  /** Commands read from it and not answered yet. */
  unanswered: number;
  /** Their bytes. */
  unansweredBytes: number;
  /** No more commands are read from it (ended, rejected, or closing). */
  done: boolean;
  /** The peer half-closed: the held commands are the last ones. */
  ended: boolean;
}

/**
 * Commands of one connection read and not yet answered, at most (and {@link maxUnansweredBytes} of them): a
 * client that sends more before the replies to the earlier ones are written is rejected (`too-many-commands`).
 * A worker has one command out at a time.
 */
export const maxUnansweredCommands = 64;
/**
 * Commands per group commit, at most: a burst from many connections is served in several, so that the
 * objects of one commit (requests, replies, events) stay few.
 */
const maxGroupCommands = 1_024;
/**
 * WAL syncs in flight at once, at most (they run in libuv's thread pool, which the fetcher files' reads share).
 */
const maxSyncsInFlight = 2;
/** Bytes of the commands of one connection read and not yet answered, at most. */
export const maxUnansweredBytes = 65_536;
/** Read and write buffer limits of a Unix socket connection, in bytes (Node's default is 64 KiB). */
const socketHighWaterMarkBytes = 4_096;

/**
 * Serves the worker line protocol on a Unix socket, and on the connections other listeners hand it
 * ({@link accept}, the TLS listener). Commands are handled in arrival order. The commands that
 * arrive together (in one turn of the event loop) are run in one transaction, a group commit, and their
 * replies are written only after it is on disk: the commit is written to the WAL, then the WAL is synced in
 * the background while the next group commits are written, and a sync releases the replies of every group
 * commit written before it started.
 */
export class WorkerServer {
  #server: Server;
  /** Open connections. */
  #connections = new Map<Socket, Connection>();
  #maxConnections: number;
  #queue: Queued[] = [];
  #flushScheduled = false;
  /**
   * What to do once the group commits written so far are synced, in order: the replies of each group commit
   * not yet released. The first is number {@link #released} in the order of all group commits.
   */
  #unsynced: Array<() => void> = [];
  #released = 0;
  /** How many of the group commits a started sync covers (a sync covers every one written before it started). */
  #covered = 0;
  /** The WAL syncs in flight. */
  #syncs = new Set<Promise<void>>();
  /** A WAL sync failed: no command is served any more. */
  #syncFailed = false;
  /** Set while group commits must wait (see {@link pauseWrites}). */
  #paused: Promise<void> | undefined;
  #closing = false;
  #socketIno: bigint | undefined;
  #path: string | undefined;
  #storage: SupervisorStorage;
  #directory: FetcherDirectory;
  #context: DaemonContext;

  /**
   * @param maxConnections - open connections (both listeners together) beyond which new ones are refused
   */
  constructor(
    storage: SupervisorStorage,
    directory: FetcherDirectory,
    context: DaemonContext,
    maxConnections: number,
  ) {
    this.#storage = storage;
    this.#directory = directory;
    this.#context = context;
    this.#maxConnections = maxConnections;
    // node:net is loaded here, not imported: it and its streams cost milliseconds at import (issue #31).
    this.#server = process
      .getBuiltinModule("node:net")
      .createServer({ allowHalfOpen: true, highWaterMark: socketHighWaterMarkBytes }, (socket) =>
        this.accept(socket),
      );
  }

  /**
   * Listens on `path` (already checked by `prepareSocketPath`); the socket file has `mode` and group `gid` from
   * the moment it appears there (see {@link listenWithFinalMode}).
   */
  async listen(path: string, mode: number, gid?: number): Promise<void> {
    this.#socketIno = await listenWithFinalMode(this.#server, path, mode, gid);
    this.#path = path;
    this.#server.on("error", (error) => this.#context.logger.error({ err: error }, "socket server error"));
  }

  /**
   * Stops accepting, drops the commands not yet handled, ends every connection once its written replies are
   * flushed, and resolves when all are closed.
   */
  async close(): Promise<void> {
    this.#closing = true;
    this.#queue = [];
    // the group commits already written are answered once synced
    while (this.#syncs.size > 0) await Promise.all(this.#syncs);
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    const ends = [...this.#connections.values()].map(
      (connection) =>
        new Promise<void>((resolve) => {
          connection.socket.once("close", () => resolve());
          const timer = setTimeout(() => connection.socket.destroy(), closeGraceMs);
          timer.unref();
          this.#stop(connection);
        }),
    );
    await Promise.all([...ends, this.#server.listening ? closed : Promise.resolve()]);
  }

  /** Connections open now, on the socket and over TLS. */
  get openConnections(): number {
    return this.#connections.size;
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
    if (this.#connections.size >= this.#maxConnections) {
      this.#refuse(socket);
      return;
    }
    this.#context.stats.connections++;
    const connection: Connection = {
      socket,
      holder,
      buffered: Buffer.alloc(0),
      unanswered: 0,
      unansweredBytes: 0,
      done: false,
      ended: false,
    };
    this.#connections.set(socket, connection);
    socket.on("data", (chunk: Buffer) => {
      if (connection.done || this.#closing) return;
      connection.buffered =
        connection.buffered.length === 0 ? chunk : Buffer.concat([connection.buffered, chunk]);
      this.#read(connection);
    });
    socket.on("end", () => {
      if (connection.done || this.#closing) return;
      connection.ended = true;
      this.#read(connection);
    });
    socket.on("drain", () => this.#read(connection));
    socket.on("error", (error) => this.#context.logger.debug({ err: error }, "worker connection error"));
    socket.on("close", () => this.#connections.delete(socket));
  }

  /**
   * Queues the complete commands buffered on `connection` while its replies are drained, and pauses it
   * otherwise (its bytes stay unread, in the kernel) until `drain`. A connection with more than
   * {@link maxUnansweredCommands} commands (or {@link maxUnansweredBytes}) read and not answered is rejected.
   * Called on data, at the end of the input, on `drain`, and after its replies were written.
   */
  #read(connection: Connection): void {
    const { socket } = connection;
    if (connection.done || this.#closing) return;
    const buffered = connection.buffered;
    let start = 0;
    let queued = false;
    while (!socket.writableNeedDrain && !socket.destroyed) {
      const end = buffered.indexOf(newline, start);
      if (end < 0) break;
      const line = buffered.subarray(start, end);
      start = end + 1;
      if (line.length > maxCommandBytes) {
        this.#reject(line, "command-too-long");
        this.#finish(connection);
        return;
      }
      if (
        connection.unanswered >= maxUnansweredCommands ||
        connection.unansweredBytes + line.length > maxUnansweredBytes
      ) {
        this.#reject(line, "too-many-commands");
        this.#finish(connection);
        return;
      }
      if (!this.#enqueue(connection, line)) {
        this.#finish(connection);
        return;
      }
      queued = true;
    }
    connection.buffered = start === 0 ? buffered : buffered.subarray(start);
    const rest = connection.buffered;
    const tail = rest.subarray(rest.lastIndexOf(newline) + 1);
    if (tail.length > maxCommandBytes) {
      this.#reject(tail, "command-too-long");
      this.#finish(connection);
      return;
    }
    const holding = tail.length !== rest.length; // complete commands wait for `drain`
    if (connection.ended && !holding) {
      if (tail.length > 0 && !this.#enqueue(connection, tail)) {
        this.#finish(connection);
        return;
      }
      this.#finish(connection);
      return;
    }
    if (holding || socket.writableNeedDrain) socket.pause();
    else socket.resume();
    if (queued) this.#scheduleFlush();
  }

  #enqueue(connection: Connection, line: Buffer): boolean {
    const command = parseCommand(line);
    if (command.kind === "reject") {
      this.#reject(line, command.reason);
      return false;
    }
    connection.unanswered++;
    connection.unansweredBytes += line.length;
    this.#queue.push({
      socket: connection.socket,
      connection,
      command,
      line: line.length,
      holder: connection.holder,
      receivedAt: performance.now(),
    });
    return true;
  }

  /** Reads no more from `connection`; it is ended once the replies queued before are written. */
  #finish(connection: Connection): void {
    connection.done = true;
    connection.buffered = Buffer.alloc(0);
    connection.socket.pause(); // what it sends from now on is not read
    this.#queue.push({ socket: connection.socket, end: true });
    this.#scheduleFlush();
  }

  /** Ends `connection` now, after the replies already written. */
  #stop(connection: Connection): void {
    connection.done = true;
    connection.buffered = Buffer.alloc(0);
    const { socket } = connection;
    socket.pause();
    if (!socket.destroyed) socket.end(() => socket.destroy());
  }

  #refuse(socket: Socket): void {
    socket.destroy();
    const sample = `${this.#connections.size} connections open, the limit (maxConnections)`;
    this.#context.refusals.refuse(
      { reason: "too-many-connections", sample },
      "connection refused: too many connections",
    );
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled || this.#paused !== undefined || this.#queue.length === 0) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  /**
   * Runs the queued commands (at most {@link maxGroupCommands}) in one transaction, and once it is synced to
   * disk writes the replies and ends what must end.
   */
  #flush(): void {
    const batch =
      this.#queue.length <= maxGroupCommands ? this.#queue : this.#queue.slice(0, maxGroupCommands);
    this.#queue = batch === this.#queue ? [] : this.#queue.slice(maxGroupCommands);
    if (this.#closing || batch.length === 0) return;
    this.#scheduleFlush(); // the rest, if any, in the next group commit
    if (this.#syncFailed) {
      this.#stopAll(batch);
      return;
    }
    const served = batch.filter((item): item is Request => "command" in item && !item.socket.destroyed);
    const requests: DispatchRequest[] = served.map(({ command, holder }) => ({
      now: Math.floor(Date.now() / 1000),
      finished: command.kind === "ready" ? undefined : command,
      next: command.kind !== "quit",
      holder,
    }));
    let jobs: Array<Job | null>;
    try {
      this.#directory.catchUp();
      jobs = this.#storage.dispatchUnsynced(requests);
    } catch (error) {
      this.#context.logger.error(
        { err: error },
        "storage failed during worker commands; their connections ended",
      );
      this.#afterSync(() => this.#stopAll(batch));
      return;
    }
    this.#afterSync(() => this.#answer(batch, served, requests, jobs));
  }

  /**
   * Runs `then` after a WAL sync that starts after this call, in order with what was queued before it. Each
   * group commit starts its own sync at once, up to {@link maxSyncsInFlight} of them; beyond, the sync that
   * starts when one ends covers all that was written meanwhile. A sync that ends releases every group commit
   * written before it started, even one whose own sync is still in flight.
   */
  #afterSync(then: () => void): void {
    this.#unsynced.push(then);
    this.#startSync();
  }

  #startSync(): void {
    const written = this.#released + this.#unsynced.length;
    if (this.#syncs.size >= maxSyncsInFlight || written === this.#covered) return;
    this.#covered = written;
    const sync: Promise<void> = this.#storage
      .syncWal()
      .then(
        () => {
          while (this.#released < written) {
            this.#released++;
            this.#unsynced.shift()!();
          }
        },
        (error: unknown) => {
          // The commits may not be on disk, and a failed sync is not safely retried: no more replies.
          this.#context.logger.error(
            { err: error },
            "syncing the WAL failed; worker connections ended and no more commands served",
          );
          this.#syncFailed = true;
          this.#released += this.#unsynced.length;
          this.#unsynced = [];
          for (const connection of this.#connections.values()) this.#stop(connection);
        },
      )
      .finally(() => {
        this.#syncs.delete(sync);
        this.#startSync();
      });
    this.#syncs.add(sync);
  }

  /** Ends the connections of `batch`'s items. */
  #stopAll(batch: Queued[]): void {
    for (const { socket } of batch) {
      const connection = this.#connections.get(socket);
      if (connection) this.#stop(connection);
    }
  }

  /** Writes the replies of a group commit (`served`, a subset of `batch`) and ends what must end. */
  #answer(batch: Queued[], served: Request[], requests: DispatchRequest[], jobs: Array<Job | null>): void {
    let next = 0; // served is batch without ends and dead connections, in the same order
    const answered = new Set<Connection>();
    for (const item of batch) {
      if ("end" in item) {
        const connection = this.#connections.get(item.socket);
        if (connection) this.#stop(connection);
      } else if (item === served[next]) {
        this.#reply(item, jobs[next]!, requests[next]!.now);
        item.connection.unanswered--;
        item.connection.unansweredBytes -= item.line;
        answered.add(item.connection);
        next++;
      }
    }
    for (const connection of answered) this.#read(connection);
  }

  /** Writes one reply, then counts and reports what it did (after the commit). */
  #reply({ socket, command, holder, receivedAt }: Request, job: Job | null, now: number): void {
    socket.write(formatReply(job));
    if (job !== null) {
      const seconds = (performance.now() - receivedAt) / 1000;
      this.#context.observer?.jobReplied(command.kind === "done" ? "DONE" : "READY", seconds);
    }
    const by = holder === undefined ? {} : { holder };
    if (command.kind !== "ready") {
      this.#context.stats.finished++;
      this.#context.emit("done", {
        attrPath: command.attrPath,
        exitCode: command.exitCode,
        finishedAt: now * 1000,
        ...by,
      });
    }
    if (job !== null) {
      this.#context.stats.dispatched++;
      this.#context.emit("job", { ...job, startedAt: now * 1000, ...by });
    }
  }

  #reject(
    line: Buffer,
    reason: "unknown-command" | "bad-done" | "command-too-long" | "too-many-commands",
  ): void {
    const sample = sampleBytes(line);
    this.#context.stats.commandsRejected++;
    this.#context.logger.warn({ reason, sample }, "worker command rejected; connection ended");
    this.#context.emit("reject", { kind: "command", reason, sample });
  }
}
