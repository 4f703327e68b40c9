import { lstatSync, unlinkSync } from "node:fs";
import { chmod } from "node:fs/promises";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { SupervisorError, SupervisorErrorCode } from "./errors.js";
import type { DaemonContext } from "./events.js";
import type { FetcherDirectory } from "./fetcher-directory.js";
import { sampleBytes } from "./fetcher-line.js";
import { formatReply, maxCommandBytes, parseCommand } from "./protocol.js";
import type { SupervisorStorage } from "./storage.js";

const newline = 0x0a;
/** How long `close()` lets open connections flush their replies before it destroys them, in ms. */
const closeGraceMs = 2_000;

/**
 * Checks the socket path before listening (D8): a missing path is fine; a socket nobody accepts on is stale
 * and removed; a live socket or anything that is not a socket is an error, and the path is left alone.
 */
export async function prepareSocketPath(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new SupervisorError(SupervisorErrorCode.SOCKET_PATH, `cannot inspect socket path ${path}`, {
      cause: error,
    });
  }
  if (!isSocket) {
    throw new SupervisorError(SupervisorErrorCode.SOCKET_PATH, `${path} exists and is not a socket`);
  }
  const alive = await new Promise<boolean | Error>((resolve) => {
    const probe = createConnection(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", (error: NodeJS.ErrnoException) =>
      resolve(error.code === "ECONNREFUSED" ? false : error),
    );
  });
  if (alive === true) {
    throw new SupervisorError(
      SupervisorErrorCode.SOCKET_IN_USE,
      `another supervisor is listening on ${path}; stop it first`,
    );
  }
  if (alive instanceof Error) {
    throw new SupervisorError(SupervisorErrorCode.SOCKET_PATH, `cannot probe socket ${path}`, {
      cause: alive,
    });
  }
  unlinkSync(path);
}

/**
 * Serves the worker line protocol on a Unix socket. Commands are handled synchronously in arrival order,
 * each reply written only after its transaction committed.
 */
export class WorkerServer {
  #server: Server;
  /** Open connections, each with the function that ends it. */
  #connections = new Map<Socket, () => void>();
  #socketIno: number | undefined;
  #path: string | undefined;
  #storage: SupervisorStorage;
  #directory: FetcherDirectory;
  #context: DaemonContext;

  constructor(storage: SupervisorStorage, directory: FetcherDirectory, context: DaemonContext) {
    this.#storage = storage;
    this.#directory = directory;
    this.#context = context;
    this.#server = createServer({ allowHalfOpen: true }, (socket) => this.#accept(socket));
  }

  /** Listens on `path` (already checked by {@link prepareSocketPath}) and gives the socket file `mode`. */
  async listen(path: string, mode: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(path, () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
    this.#path = path;
    this.#socketIno = lstatSync(path).ino;
    this.#server.on("error", (error) => this.#context.logger.error({ err: error }, "socket server error"));
    await chmod(path, mode);
  }

  /**
   * Stops accepting, ends every connection once its written replies are flushed (commands still buffered
   * are dropped), and removes the socket file if it is still ours.
   */
  async close(): Promise<void> {
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

  /** Removes the socket file if it is still the one this server created. */
  removeSocketFile(): void {
    if (this.#path === undefined) return;
    try {
      if (lstatSync(this.#path).ino === this.#socketIno) unlinkSync(this.#path);
    } catch {
      // already gone
    }
  }

  #accept(socket: Socket): void {
    this.#context.stats.connections++;
    let buffered: Buffer = Buffer.alloc(0);
    let ended = false;
    const stop = () => {
      ended = true;
      if (!socket.destroyed) socket.end(() => socket.destroy());
    };
    this.#connections.set(socket, stop);
    socket.on("data", (chunk: Buffer) => {
      if (ended) return;
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      let start = 0;
      for (;;) {
        const end = buffered.indexOf(newline, start);
        if (end < 0) break;
        if (end - start > maxCommandBytes)
          return this.#reject(buffered.subarray(start, end), "command-too-long", stop);
        if (!this.#command(socket, buffered.subarray(start, end), stop)) return;
        start = end + 1;
      }
      buffered = buffered.subarray(start);
      if (buffered.length > maxCommandBytes) this.#reject(buffered, "command-too-long", stop);
    });
    socket.on("end", () => {
      if (ended) return;
      if (buffered.length > 0 && !this.#command(socket, buffered, stop)) return;
      stop();
    });
    socket.on("error", (error) => this.#context.logger.debug({ err: error }, "worker connection error"));
    socket.on("close", () => this.#connections.delete(socket));
  }

  /** Handles one command; returns `false` when the connection is being ended instead. */
  #command(socket: Socket, line: Buffer, stop: () => void): boolean {
    const command = parseCommand(line);
    if (command.kind === "reject") {
      this.#reject(line, command.reason, stop);
      return false;
    }
    const now = Math.floor(Date.now() / 1000);
    let reply: string;
    let job: { attrPath: string; payload: string } | null;
    try {
      this.#directory.catchUp();
      if (command.kind === "done") this.#storage.finish(command.attrPath, now, command.exitCode);
      job = this.#storage.dequeue(now);
      reply = formatReply(job);
    } catch (error) {
      this.#context.logger.error({ err: error }, "storage failed during a worker command; connection ended");
      stop();
      return false;
    }
    socket.write(reply);
    if (command.kind === "done") {
      this.#context.stats.finished++;
      this.#context.emit("done", { attrPath: command.attrPath, exitCode: command.exitCode, finishedAt: now });
    }
    if (job !== null) {
      this.#context.stats.dispatched++;
      this.#context.emit("job", { ...job, startedAt: now });
    }
    return true;
  }

  #reject(line: Buffer, reason: "unknown-command" | "bad-done" | "command-too-long", stop: () => void): void {
    const sample = sampleBytes(line);
    this.#context.stats.commandsRejected++;
    this.#context.logger.warn({ reason, sample }, "worker command rejected; connection ended");
    this.#context.emit("reject", { kind: "command", reason, sample });
    stop();
  }
}
