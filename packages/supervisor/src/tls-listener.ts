import type { DropArgument, Socket } from "node:net";
import type { Server, TLSSocket } from "node:tls";
import { ErrorCode, SupervisorError } from "./errors.js";
import type { DaemonContext, RejectReason } from "./events.js";
import { formatSubject, minTlsVersion, readTlsFiles, type TlsEndpoint } from "./tls-endpoint.js";

/** Longest description of a refusal in a log line or `reject` event, in characters. */
const maxSampleLength = 200;

/** The log line of a refused TLS connection. */
const refusedMessage = "TLS connection refused";

/** How many handshakes the listener lets run at once, and for how long each. */
export interface HandshakeLimits {
  /** TLS handshakes in progress at once, at most; a connection beyond is closed as soon as it is accepted. */
  maxHandshakes: number;
  /** How long a client may take to complete the TLS handshake, in ms. */
  handshakeTimeoutMs: number;
}

/**
 * The daemon's TLS listener: accepts only clients that present a certificate signed by the configured CA
 * (mutual TLS, TLS 1.2 or newer) and hands each accepted connection, with its certificate's subject, to
 * `accept`. Every other connection is refused (see `ConnectionRefusals`) and destroyed before a byte of the
 * protocol is read. At most `maxHandshakes` connections are in their handshake at once: one more is closed by
 * Node as soon as it is accepted, before any TLS state is made for it, so that clients that never finish
 * their handshake cost a bounded number of descriptors and memory.
 */
export class TlsListener {
  #server: Server;
  /** Connections still in their handshake: ended by {@link close}, which would otherwise wait for them. */
  #handshaking = new Set<Socket>();
  /** Connections accepted by the server and not closed yet, handshaking or not. */
  #open = 0;
  /** Each accepted connection's peer, `address:port`, taken at accept: a closed socket no longer knows it. */
  #peers = new WeakMap<Socket, string>();
  #endpoint: TlsEndpoint;
  #limits: HandshakeLimits;
  #context: DaemonContext;

  /**
   * @param endpoint - the address and the files
   * @param files - the files' contents, already read and checked by `readTlsFiles`
   * @param limits - the handshakes in progress at most, and how long each may take
   * @param accept - takes over an authorized connection
   * @param context - the daemon's logger, counters and events
   */
  constructor(
    endpoint: TlsEndpoint,
    files: Awaited<ReturnType<typeof readTlsFiles>>,
    limits: HandshakeLimits,
    accept: (socket: Socket, subject: string) => void,
    context: DaemonContext,
  ) {
    this.#endpoint = endpoint;
    this.#limits = limits;
    this.#context = context;
    // node:tls is loaded here, not imported: importing it costs milliseconds at the package's import (issue #31).
    this.#server = process.getBuiltinModule("node:tls").createServer({
      ...files,
      minVersion: minTlsVersion,
      requestCert: true,
      // Verified below instead, so that the reason can be logged: Node's own check drops the socket silently.
      rejectUnauthorized: false,
      // Not during the handshake: a client that hangs up in it is noticed at once (half-open, the handshake
      // would wait for its timeout). Accepted connections are half-open, as on the Unix socket.
      allowHalfOpen: false,
      handshakeTimeout: limits.handshakeTimeoutMs,
    });
    this.#updateCap();
    // Beyond the cap Node closes the connection as it accepts it, before it makes a socket or TLS state.
    this.#server.on("drop", (peer?: DropArgument) =>
      context.refusals.refuse(
        {
          reason: "too-many-tls-handshakes",
          sample: `${this.#handshaking.size} TLS handshakes in progress, the limit (maxTlsHandshakes)`,
          ...(peer?.remoteAddress === undefined ? {} : { peer: `${peer.remoteAddress}:${peer.remotePort}` }),
        },
        refusedMessage,
      ),
    );
    this.#server.on("connection", (socket: Socket) => {
      // One small reply per command: Nagle's algorithm would only hold replies back, as on loopback.
      socket.setNoDelay(true);
      this.#peers.set(socket, `${socket.remoteAddress}:${socket.remotePort}`);
      this.#open++;
      this.#handshaking.add(socket);
      socket.once("close", () => {
        this.#open--;
        this.#handshaking.delete(socket);
        this.#updateCap();
      });
    });
    this.#server.on("secureConnection", (socket) => {
      this.#handshaking.delete(acceptedSocket(socket));
      this.#updateCap();
      const rejection = authorizationFailure(socket);
      if (rejection === undefined) {
        socket.allowHalfOpen = true;
        accept(socket, formatSubject(socket.getPeerX509Certificate()!.subject));
        return;
      }
      this.#reject(socket, rejection.reason, rejection.detail);
      socket.destroy();
    });
    this.#server.on("tlsClientError", (error: NodeJS.ErrnoException, socket) => {
      const plaintext =
        error.code === "ERR_SSL_WRONG_VERSION_NUMBER" || error.code === "ERR_SSL_HTTP_REQUEST";
      const detail =
        error.code === "ECONNRESET" ? "the client hung up during the TLS handshake" : firstLine(error);
      this.#reject(socket, plaintext ? "tls-plaintext" : "tls-handshake", detail);
      socket.destroy();
    });
  }

  /**
   * Listens on the endpoint's host and port.
   *
   * @throws SupervisorError `ERR_X_SUPERVISOR_TLS` when the address cannot be listened on (in use, not local)
   */
  async listen(): Promise<void> {
    const { host, port } = this.#endpoint;
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) =>
        reject(
          new SupervisorError(ErrorCode.TLS, `cannot listen for TLS on ${host}:${port}: ${error.message}`, {
            cause: error,
          }),
        );
      this.#server.once("error", onError);
      this.#server.listen(port, host, () => {
        this.#server.off("error", onError);
        resolve();
      });
    });
    this.#server.on("error", (error) => this.#context.logger.error({ err: error }, "TLS server error"));
  }

  /** The address and port listened on (the actual port when `0` was asked for). */
  address(): { host: string; port: number } {
    const address = this.#server.address();
    if (address === null || typeof address === "string") return { ...this.#endpoint };
    return { host: address.address, port: address.port };
  }

  /**
   * Reads the certificate, key and CA files again and uses them for new connections; connections already
   * open keep going. On failure the files in use stay in use.
   *
   * @throws SupervisorError `ERR_X_SUPERVISOR_TLS` when a file cannot be read or they do not fit together
   */
  async reload(): Promise<void> {
    const files = await readTlsFiles(this.#endpoint);
    this.#server.setSecureContext({ ...files, minVersion: minTlsVersion });
  }

  /** Stops accepting; resolves once every connection it accepted has closed (the worker server ends them). */
  close(): Promise<void> {
    if (!this.#server.listening) return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#handshaking) socket.destroy();
    return closed;
  }

  /** TLS handshakes in progress now. */
  get handshakes(): number {
    return this.#handshaking.size;
  }

  /**
   * Sets Node's accept-time cap (`server.maxConnections`, which counts every open connection of the server)
   * to the connections past their handshake plus `maxHandshakes`: a new connection is dropped exactly when
   * `maxHandshakes` are in their handshake.
   */
  #updateCap(): void {
    this.#server.maxConnections = this.#open - this.#handshaking.size + this.#limits.maxHandshakes;
  }

  #reject(socket: TLSSocket, reason: RejectReason, sample: string): void {
    const peer = this.#peers.get(acceptedSocket(socket)) ?? "unknown";
    sample = sample.length > maxSampleLength ? `${sample.slice(0, maxSampleLength)}…` : sample;
    this.#context.refusals.refuse({ reason, sample, peer }, refusedMessage);
  }
}

/** Why an established TLS connection is not authorized, or `undefined` when its client certificate is good. */
function authorizationFailure(socket: TLSSocket): { reason: RejectReason; detail: string } | undefined {
  const certificate = socket.getPeerX509Certificate();
  if (certificate === undefined) {
    return { reason: "tls-no-certificate", detail: "the client presented no certificate" };
  }
  if (socket.authorized) return undefined;
  const error = String(socket.authorizationError);
  const subject = formatSubject(certificate.subject);
  return {
    reason: error === "CERT_HAS_EXPIRED" ? "tls-expired-certificate" : "tls-untrusted-certificate",
    detail: `${error}: ${subject}`,
  };
}

/**
 * The TCP socket the server accepted, which `socket` wraps: the one its `connection` event gave. Node keeps it
 * as `_parent`, its only link; a wrapper that lacks it is its own accepted socket.
 */
function acceptedSocket(socket: TLSSocket): Socket {
  return (socket as TLSSocket & { _parent?: Socket | null })._parent ?? socket;
}

function firstLine(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error.message.split("\n")[0] ?? "";
  return code === undefined ? message : `${code}: ${message}`;
}
