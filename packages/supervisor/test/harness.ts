import { mkdirSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import { recordingLogger } from "@x/test-support/recording-logger";
import { testTempDir } from "@x/test-support/temp-dir";
import { onTestFinished } from "vitest";
import { type Supervisor, startSupervisor } from "../src/index.js";

/** Paths of one daemon's database, fetcher directory and socket in a fresh temporary directory. */
export interface DaemonPaths {
  root: string;
  db: string;
  fetchersDir: string;
  socket: string;
}

/**
 * Fresh database, fetchers directory and socket paths in a temporary directory, removed when the current test
 * finishes. Vitest runs `onTestFinished` callbacks in reverse order of registration: daemons, connections and
 * processes the test starts on these paths afterwards are stopped before the directory goes.
 */
export function paths(): DaemonPaths {
  const root = testTempDir("x-supervisor-");
  const fetchersDir = join(root, "fetchers");
  mkdirSync(fetchersDir);
  return { root, db: join(root, "state.db"), fetchersDir, socket: join(root, "s.sock") };
}

/** Starts a daemon on `p` with a recording logger (`recorder`); closed when the current test finishes. */
export async function start(
  p: DaemonPaths,
): Promise<{ sup: Supervisor; recorder: ReturnType<typeof recordingLogger> }> {
  const recorder = recordingLogger();
  const sup = await startSupervisor({
    db: p.db,
    fetchersDir: p.fetchersDir,
    socket: p.socket,
    logger: recorder.logger,
  });
  onTestFinished(() => sup.close());
  return { sup, recorder };
}

/** Writes `bytes`, half-closes, and returns everything the server sent until it closed. */
export function exchange(socketPath: string, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.end(bytes);
  });
}

/** A raw connection that reads reply lines one by one. */
export class RawConnection {
  readonly socket: Socket;
  #buffer = "";
  #waiters: Array<(line: string | null) => void> = [];
  #lines: string[] = [];
  closed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      this.#buffer += text;
      let nl = this.#buffer.indexOf("\n");
      while (nl >= 0) {
        this.#push(this.#buffer.slice(0, nl + 1));
        this.#buffer = this.#buffer.slice(nl + 1);
        nl = this.#buffer.indexOf("\n");
      }
    });
    socket.on("close", () => {
      this.closed = true;
      for (const w of this.#waiters.splice(0)) w(null);
    });
    socket.on("error", () => {});
  }

  static open(path: string): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path, () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  write(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  /** The next reply line including its `\n`, or `null` when the connection closed first. */
  next(): Promise<string | null> {
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  async send(bytes: string): Promise<string | null> {
    this.write(bytes);
    return this.next();
  }

  close(): void {
    this.socket.destroy();
  }

  /** Same as {@link RawConnection.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  #push(line: string): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(line);
    else this.#lines.push(line);
  }
}
