import type { Socket } from "node:net";
import { ErrorCode, SupervisorError } from "./errors.js";
import { parseReply } from "./protocol.js";
import type { Job } from "./storage.js";
import { minTlsVersion, readTlsFiles, type TlsEndpoint } from "./tls-endpoint.js";

interface Pending {
  resolve: (job: Job | null) => void;
  reject: (error: Error) => void;
}

const badAttrPath = /[ \r\n]/;

/**
 * One connection to a supervisor, on its Unix socket or over mutual TLS, speaking the worker protocol. Commands may be issued without
 * awaiting the previous one: they are sent, and resolved, in call order.
 *
 * @example
 * ```ts
 * await using client = await SupervisorClient.connect("/run/supervisor.sock");
 * let job = await client.ready();
 * while (job) job = await client.done(job.attrPath, await build(job));
 * ```
 */
export class SupervisorClient {
  #socket: Socket;
  #pending: Pending[] = [];
  #buffer = "";
  #closed: Promise<void>;
  #ended = false;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => this.#receive(text));
    socket.on("error", () => {}); // the close that follows rejects what is pending
    this.#closed = new Promise((resolve) =>
      socket.once("close", () => {
        this.#ended = true;
        this.#failAll(() => this.#closedError());
        resolve();
      }),
    );
    socket.once("end", () => {
      this.#ended = true;
      this.#failAll(() => this.#closedError());
    });
  }

  /**
   * Opens a connection.
   *
   * @param target - the supervisor's socket path, or its TLS address with this worker's certificate, key and
   *   the CA that signed the supervisor's certificate (whose names must include `host`)
   * @param options - `signal` gives up the attempt: a connection or TLS handshake that hangs (a link that
   *   drops every byte never fails by itself) is closed, and the call rejects with the signal's reason
   *   (`AbortSignal.timeout(ms)` bounds it)
   * @throws SupervisorError `ERR_X_SUPERVISOR_CONNECT` when nobody listens there or the TLS handshake fails,
   *   `ERR_X_SUPERVISOR_TLS` when a TLS file cannot be read
   */
  static async connect(
    target: string | TlsEndpoint,
    { signal }: { signal?: AbortSignal } = {},
  ): Promise<SupervisorClient> {
    const where = typeof target === "string" ? target : `tls://${target.host}:${target.port}`;
    signal?.throwIfAborted();
    let socket: Socket;
    let ready: string;
    if (typeof target === "string") {
      // node:net is loaded here, not imported: it and its streams cost milliseconds at import (issue #31).
      socket = process.getBuiltinModule("node:net").createConnection(target);
      ready = "connect";
    } else {
      const files = await readTlsFiles(target);
      signal?.throwIfAborted();
      // node:tls is loaded here, not imported: importing it costs milliseconds at the package's import (issue #31).
      socket = process.getBuiltinModule("node:tls").connect({
        ...files,
        host: target.host,
        port: target.port,
        minVersion: minTlsVersion,
        // SNI takes host names only; an IP address is still checked against the certificate's names.
        ...(process.getBuiltinModule("node:net").isIP(target.host) === 0 ? { servername: target.host } : {}),
      });
      socket.setNoDelay(true);
      ready = "secureConnect";
    }
    return new Promise((resolve, reject) => {
      const onError = (error: Error) => {
        signal?.removeEventListener("abort", onAbort);
        reject(
          new SupervisorError(ErrorCode.CONNECT, `cannot connect to supervisor at ${where}`, {
            cause: error,
          }),
        );
      };
      const onAbort = () => {
        socket.off("error", onError);
        socket.on("error", () => {}); // the attempt is given up; what follows does not matter
        socket.destroy();
        reject(signal!.reason);
      };
      socket.once("error", onError);
      signal?.addEventListener("abort", onAbort, { once: true });
      socket.once(ready, () => {
        socket.off("error", onError);
        signal?.removeEventListener("abort", onAbort);
        resolve(new SupervisorClient(socket));
      });
    });
  }

  /**
   * Sends `READY`.
   *
   * @returns the job handed out, or `null` for `NOJOBS`
   */
  ready(): Promise<Job | null> {
    return this.#send("READY\n");
  }

  /**
   * Sends `DONE <attrPath> <exitCode>`, which also asks for the next job.
   *
   * @param attrPath - the finished job's attr path: non-empty, no space, CR or LF
   * @param exitCode - its exit status, an integer
   * @returns the next job, or `null` for `NOJOBS`
   * @throws SupervisorError `ERR_X_SUPERVISOR_BAD_ARGUMENT` (nothing is sent) for a bad path or code
   */
  done(attrPath: string, exitCode: number): Promise<Job | null> {
    return this.#report("DONE", attrPath, exitCode);
  }

  /**
   * Sends `QUIT <attrPath> <exitCode>`: reports the job as {@link done} does, but asks for no next job, as a
   * worker that is leaving. The daemon records it and answers `NOJOBS`.
   *
   * @param attrPath - the finished job's attr path: non-empty, no space, CR or LF
   * @param exitCode - its exit status, an integer
   * @returns once the daemon has recorded it
   * @throws SupervisorError `ERR_X_SUPERVISOR_BAD_ARGUMENT` (nothing is sent) for a bad path or code
   */
  async quit(attrPath: string, exitCode: number): Promise<void> {
    await this.#report("QUIT", attrPath, exitCode);
  }

  #report(verb: "DONE" | "QUIT", attrPath: string, exitCode: number): Promise<Job | null> {
    if (typeof attrPath !== "string" || attrPath === "" || badAttrPath.test(attrPath)) {
      return Promise.reject(
        new SupervisorError(
          ErrorCode.BAD_ARGUMENT,
          `attr path ${JSON.stringify(attrPath)} must be non-empty, without space, CR or LF`,
        ),
      );
    }
    if (!Number.isSafeInteger(exitCode)) {
      return Promise.reject(
        new SupervisorError(ErrorCode.BAD_ARGUMENT, `exit code must be an integer, got ${exitCode}`),
      );
    }
    return this.#send(`${verb} ${attrPath} ${exitCode}\n`);
  }

  /**
   * Half-closes the connection, lets pending calls receive their replies, and resolves once the connection is
   * closed. Idempotent.
   */
  close(): Promise<void> {
    if (!this.#socket.destroyed) this.#socket.end();
    return this.#closed;
  }

  /** Closes the connection at once; pending calls reject with `ERR_X_SUPERVISOR_CONNECTION_CLOSED`. */
  destroy(): void {
    this.#socket.destroy();
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #send(command: string): Promise<Job | null> {
    if (this.#ended || this.#socket.destroyed || this.#socket.writableEnded) {
      return Promise.reject(this.#closedError());
    }
    return new Promise((resolve, reject) => {
      this.#pending.push({ resolve, reject });
      this.#socket.write(command);
    });
  }

  #receive(text: string): void {
    this.#buffer += text;
    for (;;) {
      const newline = this.#buffer.indexOf("\n");
      if (newline < 0) return;
      const line = this.#buffer.slice(0, newline);
      this.#buffer = this.#buffer.slice(newline + 1);
      const reply = parseReply(line);
      const waiting = this.#pending.shift();
      if (reply === undefined || waiting === undefined) {
        const error = new SupervisorError(
          ErrorCode.BAD_REPLY,
          `unexpected reply from supervisor: ${JSON.stringify(line.slice(0, 200))}`,
        );
        waiting?.reject(error);
        this.#socket.destroy();
        return;
      }
      waiting.resolve(reply);
    }
  }

  #failAll(error: () => Error): void {
    for (const waiting of this.#pending.splice(0)) waiting.reject(error());
  }

  #closedError(): SupervisorError {
    return new SupervisorError(
      ErrorCode.CONNECTION_CLOSED,
      "the connection to the supervisor closed before its reply",
    );
  }
}
