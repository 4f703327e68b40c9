import { EventEmitter } from "node:events";
import type { Logger } from "@x/core";
import {
  durationMs,
  loggerOption,
  parseOptions,
  type ReadOnlyHttpServer,
  trackCreatedPaths,
  v,
} from "@x/core/internal";
import { Checkpointer } from "./checkpointer.js";
import { ConnectionRefusals } from "./connection-refusals.js";
import { DatabaseLock } from "./database-lock.js";
import { ErrorCode, SupervisorError } from "./errors.js";
import { type DaemonContext, newStats, type SupervisorEvents, type SupervisorStats } from "./events.js";
import { FetcherDirectory } from "./fetcher-directory.js";
import { type HttpEndpoint, httpEndpointSchema, httpListener } from "./http-endpoint.js";
import { createJobHoldersTable, hasJobHoldersTable } from "./job-holders.js";
import { SupervisorMetrics } from "./metrics.js";
import { integer } from "./option-schemas.js";
import { inlineReader, QueueReader, type SqlReader } from "./queue-reader.js";
import { resolveGroupId } from "./socket-listen.js";
import { checkSocketDirectory, prepareSocketPath } from "./socket-path.js";
import { SupervisorStorage } from "./storage.js";
import { readTlsFiles, type TlsEndpoint, tlsEndpointSchema } from "./tls-endpoint.js";
import { TlsListener } from "./tls-listener.js";
import { WorkerServer } from "./worker-server.js";

/** Options of {@link startSupervisor}. */
export interface SupervisorOptions {
  /** Path of the SQLite database (created if missing, migrated to schema version 2). */
  db: string;
  /**
   * Mode of the database file when the daemon creates it, before the umask; SQLite gives its `-wal` and `-shm`
   * files the same mode, and so does the lock file `<db>-lock`. An existing database keeps its mode. Default
   * `0o600`: the daemon's user alone (the queue's payloads are in it).
   */
  dbMode?: number;
  /** Directory of fetcher files (created, recursively, if missing). */
  fetchersDir: string;
  /** Path of the Unix socket workers connect to; its parent directory must exist. */
  socket: string;
  /**
   * Mode of the socket file, which has it from the moment it appears at `socket` (it is made in a private
   * directory beside it and renamed into place). Default `0o660`: the daemon's user and group.
   */
  socketMode?: number;
  /**
   * Group of the socket file, a group id or a name (looked up with `getent group`, else in `/etc/group`), set
   * before it appears at `socket`. The daemon's user must be a member (or root). Default: the daemon's group.
   */
  socketGroup?: number | string;
  /**
   * Open worker connections, on the socket and over TLS (past the handshake, see `maxTlsHandshakes`)
   * together, beyond which a new one is closed at once,
   * logged (`connection refused: too many connections`), counted in `connectionsRejected` and reported as a
   * `reject` event (`too-many-connections`). Default 512.
   */
  maxConnections?: number;
  /**
   * Also accept workers over TLS on `tls.host`:`tls.port`, besides the Unix socket: only clients that present
   * a certificate signed by `tls.caFile` (mutual TLS, TLS 1.2+); the others are logged, counted
   * (`connectionsRejected`) and refused before a byte of the protocol is read. The protocol, its limits and the
   * queue are the same on both. The subject of each job's client certificate is logged with `job` and `done`
   * and recorded in the table `x_supervisor_job_holders`. Default: no TLS.
   */
  tls?: TlsEndpoint;
  /**
   * With `tls`: TLS handshakes in progress at once, at most. One more connection is closed as soon as it is
   * accepted, before the handshake costs any memory, and refused as `too-many-tls-handshakes`. Handshakes are
   * counted apart from `maxConnections`, so that clients that never finish theirs cannot take the places of
   * the workers on the socket; the daemon holds at most `maxConnections + maxTlsHandshakes` worker
   * connections. Default 64.
   */
  maxTlsHandshakes?: number;
  /**
   * With `tls`: how long a client may take to complete its TLS handshake, in ms; then it is refused
   * (`tls-handshake`) and closed. Default 5 000.
   */
  tlsHandshakeTimeoutMs?: number;
  /**
   * Also serve a read-only HTTP page of the queue (`/`), the same data as JSON (`/queue.json`) and Prometheus
   * metrics (`/metrics`) on `http.host` (default `127.0.0.1`, loopback only):`http.port`. Unauthenticated: expose
   * it through a reverse proxy. Default: no HTTP listener.
   */
  http?: HttpEndpoint;
  /** A pino-shaped logger. Default: silent. */
  logger?: Logger;
  /** Aborting it closes the daemon; an already aborted signal makes `startSupervisor` reject. */
  signal?: AbortSignal;
}

const path = (name: string) =>
  v.string({ error: `a ${name} path (string)` }).min(1, { error: `a non-empty ${name} path` });

const fileMode = (fallback: number) =>
  v
    .number({ error: "a file mode (integer 0 to 0o777)" })
    .int({ error: "a file mode (integer 0 to 0o777)" })
    .min(0, { error: "a file mode (integer 0 to 0o777)" })
    .max(0o777, { error: "a file mode (integer 0 to 0o777)" })
    .default(fallback);

const optionsSchema = v.strictObject({
  db: path("database file"),
  dbMode: fileMode(0o600),
  fetchersDir: path("directory"),
  socket: path("socket"),
  socketMode: fileMode(0o660),
  socketGroup: v
    .union(
      [
        v.number().int().min(0).max(0xfffffffe),
        v
          .string()
          .min(1)
          .regex(/^[^:\n\0]+$/),
      ],
      { error: "a group id (integer 0 to 4294967294) or a group name" },
    )
    .optional(),
  maxConnections: integer(1, 1_000_000, "a number of connections").default(512),
  tls: tlsEndpointSchema.optional(),
  maxTlsHandshakes: integer(1, 100_000, "a number of handshakes").default(64),
  tlsHandshakeTimeoutMs: durationMs({ min: 1, integer: true }).default(5_000),
  http: httpEndpointSchema.optional(),
  logger: loggerOption,
  signal: v.instanceof(AbortSignal, { error: "an AbortSignal" }).optional(),
});

/**
 * The running daemon: an `EventEmitter` of {@link SupervisorEvents} (`job`, `done`, `ingest`, `run`,
 * `reject`); it never emits `error`.
 */
export class Supervisor extends EventEmitter<SupervisorEvents> {
  /** The daemon's storage; closed once {@link close} has finished. */
  readonly storage: SupervisorStorage;
  #stats: SupervisorStats;
  #directory: FetcherDirectory;
  #server: WorkerServer;
  #tls: TlsListener | undefined;
  #http: ReadOnlyHttpServer | undefined;
  #metrics: SupervisorMetrics;
  /** The read thread of the page and the metrics, started on first use. */
  #reader: QueueReader | SqlReader | undefined;
  #checkpointer: Checkpointer | undefined;
  #lock: DatabaseLock | undefined;
  #closing: Promise<void> | undefined;
  #logger: Logger;
  #context: DaemonContext;

  /**
   * Builds the daemon's parts, none of them started yet: {@link Supervisor.start} starts them.
   *
   * @param storage - an open, upgraded storage, owned by the daemon from now on
   * @param lock - the lock of its database, released by {@link close}
   * @param fetchersDir - the fetcher directory
   * @param logger - the daemon's logger
   * @param maxConnections - see {@link SupervisorOptions.maxConnections}
   */
  private constructor(
    storage: SupervisorStorage,
    lock: DatabaseLock | undefined,
    fetchersDir: string,
    logger: Logger,
    maxConnections: number,
  ) {
    super();
    this.storage = storage;
    this.#lock = lock;
    this.#logger = logger;
    this.#stats = newStats();
    const base: Omit<DaemonContext, "refusals"> = {
      logger,
      stats: this.#stats,
      emit: (event, ...payload) => {
        try {
          (this.emit as (name: string, ...args: unknown[]) => boolean)(event, ...payload);
        } catch (error) {
          logger.error({ err: error, event }, "a supervisor event listener threw");
        }
      },
    };
    const context: DaemonContext = { ...base, refusals: new ConnectionRefusals(base) };
    this.#context = context;
    this.#directory = new FetcherDirectory(fetchersDir, storage, context);
    this.#server = new WorkerServer(storage, this.#directory, context, maxConnections);
    const server = this.#server;
    this.#metrics = new SupervisorMetrics({
      storage,
      reader: () => this.#queueReader(),
      stats: () => this.#stats,
      openConnections: () => server.openConnections,
      tlsHandshakes: () => this.#tls?.handshakes ?? 0,
      on: (event, listener) =>
        (this.on as (name: string, listener: (...args: unknown[]) => void) => unknown)(
          event,
          listener as unknown as (...args: unknown[]) => void,
        ),
    });
    context.observer = this.#metrics;
    this.#checkpointer = startCheckpointer(storage, this.#server, logger, this.#metrics);
  }

  /**
   * Starts the daemon: checks the socket path, opens and migrates the database, ingests the fetcher
   * directory (and deletes the runs whose files vanished), then listens. Resolves once workers can be
   * served. {@link startSupervisor} is the same function.
   *
   * @param options - see {@link SupervisorOptions}
   * @throws SupervisorError `ERR_X_SUPERVISOR_INVALID_OPTION`, `ERR_X_SUPERVISOR_SOCKET_IN_USE`,
   *   `ERR_X_SUPERVISOR_SOCKET_PATH`, `ERR_X_SUPERVISOR_DATABASE_IN_USE`, `ERR_X_SUPERVISOR_SCHEMA`, or the
   *   database's own error
   */
  static async start(options: SupervisorOptions): Promise<Supervisor> {
    const {
      db,
      dbMode,
      fetchersDir,
      socket,
      socketMode,
      socketGroup,
      maxConnections,
      tls,
      maxTlsHandshakes,
      tlsHandshakeTimeoutMs,
      http,
      logger,
      signal,
    } = parseOptions(optionsSchema, options, ErrorCode.INVALID_OPTION, SupervisorError);
    signal?.throwIfAborted();
    const socketGid = socketGroup === undefined ? undefined : resolveGroupId(socketGroup);
    checkSocketDirectory(socket);
    const tlsFiles = tls === undefined ? undefined : await readTlsFiles(tls);
    signal?.throwIfAborted();
    // What a failed start removes again: what it created, and only that.
    const created = trackCreatedPaths(
      db === ":memory:" || db === ""
        ? [fetchersDir]
        : [db, `${db}-wal`, `${db}-shm`, DatabaseLock.path(db) ?? db, fetchersDir],
    );
    // The database's lock first: a second daemon started with the same arguments is told the database is in
    // use (78), not that the socket is.
    let lock: DatabaseLock | undefined;
    let storage: SupervisorStorage;
    try {
      lock = DatabaseLock.acquire(db, dbMode);
      await prepareSocketPath(socket);
      storage = SupervisorStorage.open(db, { mode: dbMode });
    } catch (error) {
      // Without the lock, what looks created may be another daemon's, starting at the same moment: left alone.
      if (lock !== undefined || db === ":memory:" || db === "") created.remove();
      lock?.release();
      throw error;
    }
    let supervisor: Supervisor | undefined;
    try {
      storage.upgrade();
      supervisor = new Supervisor(storage, lock, fetchersDir, logger, maxConnections);
      await supervisor.#directory.start();
      signal?.throwIfAborted();
      await supervisor.#server.listen(socket, socketMode, socketGid);
      if (tls !== undefined && tlsFiles !== undefined) {
        createJobHoldersTable(storage.db);
        const server = supervisor.#server;
        supervisor.#tls = new TlsListener(
          tls,
          tlsFiles,
          { maxHandshakes: maxTlsHandshakes, handshakeTimeoutMs: tlsHandshakeTimeoutMs },
          (connection, subject) => server.accept(connection, subject),
          supervisor.#context,
        );
        await supervisor.#tls.listen();
      }
      if (http !== undefined) {
        const sup = supervisor;
        supervisor.#http = httpListener(
          http,
          {
            reader: () => sup.#queueReader(),
            holders: () => !storage.closed && hasJobHoldersTable(storage.db),
            metrics: sup.#metrics,
            closed: () => sup.#closing !== undefined,
          },
          logger,
        );
        await supervisor.#http.listen();
      }
      signal?.throwIfAborted();
    } catch (error) {
      if (supervisor) await supervisor.close();
      else {
        storage.close();
        lock?.release();
      }
      created.remove(); // after close(): the lock is released, the files are closed
      throw error;
    }
    const started = supervisor;
    signal?.addEventListener("abort", () => void started.close(), { once: true });
    return started;
  }

  /** The TLS listener's address and actual port (useful with `port: 0`), or `undefined` without `tls`. */
  tlsAddress(): { host: string; port: number } | undefined {
    return this.#tls?.address();
  }

  /** The HTTP listener's address and actual port (useful with `port: 0`), or `undefined` without `http`. */
  httpAddress(): { host: string; port: number } | undefined {
    return this.#http?.address();
  }

  /** The Prometheus metrics in the text format, as `/metrics` serves them (also without `http`). */
  metrics(): Promise<string> {
    return this.#metrics.metrics();
  }

  /**
   * Reads the TLS certificate, key and CA files again (as after a renewal) and uses them for new connections;
   * open connections are not dropped. On failure the files in use stay in use. The CLI calls it on SIGHUP.
   *
   * @throws SupervisorError `ERR_X_SUPERVISOR_TLS` when a file cannot be read or they do not fit together,
   *   `ERR_X_SUPERVISOR_INVALID_OPTION` when the daemon was started without `tls`
   */
  async reloadTls(): Promise<void> {
    if (this.#tls === undefined) {
      throw new SupervisorError(ErrorCode.INVALID_OPTION, "reloadTls(): the daemon was started without tls");
    }
    await this.#tls.reload();
  }

  /** Counters since start (a copy). */
  stats(): SupervisorStats {
    return { ...this.#stats };
  }

  /**
   * Stops gracefully: stops accepting connections, ends open ones once their replies are sent, stops watching,
   * checkpoints the WAL (TRUNCATE), closes the database and removes the socket file. Idempotent; concurrent
   * calls share one promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** The reader of the page's and the metrics' queries: a thread for a file database. */
  #queueReader(): SqlReader {
    this.#reader ??= this.storage.db.memory
      ? inlineReader(this.storage.db)
      : new QueueReader(this.storage.db.name);
    return this.#reader;
  }

  async #close(): Promise<void> {
    await Promise.all([this.#http?.close(), this.#tls?.close(), this.#server.close()]);
    this.#context.refusals.flush();
    if (this.#reader instanceof QueueReader) await this.#reader.stop();
    await this.#directory.close();
    await this.#checkpointer?.stop();
    try {
      if (!this.storage.closed) this.storage.db.pragma("wal_checkpoint(TRUNCATE)");
    } catch (error) {
      this.#logger.warn({ err: error }, "WAL checkpoint at close failed");
    }
    this.storage.close();
    this.#lock?.release();
    this.#server.removeSocketFile();
  }
}

/**
 * Starts the daemon: checks the socket path, opens and migrates the database, ingests the fetcher directory
 * (and deletes the runs whose files vanished), then listens. Resolves once workers can be served.
 *
 * @param options - see {@link SupervisorOptions}
 * @throws SupervisorError `ERR_X_SUPERVISOR_INVALID_OPTION`, `ERR_X_SUPERVISOR_SOCKET_IN_USE`,
 *   `ERR_X_SUPERVISOR_SOCKET_PATH`, `ERR_X_SUPERVISOR_DATABASE_IN_USE`, `ERR_X_SUPERVISOR_SCHEMA`, or the
 *   database's own error
 */
export function startSupervisor(options: SupervisorOptions): Promise<Supervisor> {
  return Supervisor.start(options);
}

/** Time between background WAL checkpoints, in ms. */
const checkpointIntervalMs = 250;
/**
 * The WAL size the daemon keeps to, in bytes (64 MiB): a WAL holding more is started over, with worker
 * commands paused meanwhile, and a larger file is cut back to it when it starts over (`journal_size_limit`).
 */
const walSizeLimitBytes = 64 * 1024 * 1024;

/**
 * For a file database: moves WAL checkpoints (and their fsync) to a background thread and turns off the
 * inline auto-checkpoint, which would otherwise stall one commit in a thousand pages; restores it
 * (SQLite's default, 1 000 pages) if that thread dies. Worker commands, the writes that can go on without
 * a pause, wait while an oversized WAL is started over; an ingest in progress is waited for by the
 * checkpoint itself.
 */
function startCheckpointer(
  storage: SupervisorStorage,
  server: WorkerServer,
  logger: Logger,
  metrics: SupervisorMetrics,
): Checkpointer | undefined {
  if (storage.db.memory) return undefined;
  storage.db.pragma(`journal_size_limit = ${walSizeLimitBytes}`);
  const checkpointer = new Checkpointer({
    path: storage.db.name,
    intervalMs: checkpointIntervalMs,
    walCapBytes: walSizeLimitBytes,
    lockWaitMs: 1_000,
    logger,
    pauseWrites: (until) => server.pauseWrites(until),
    onPause: (pausedMs) => metrics.checkpointPaused(pausedMs / 1000),
    onFailure: () => {
      logger.warn("the background WAL checkpointer stopped; checkpointing inline from now on");
      if (!storage.closed) storage.db.pragma("wal_autocheckpoint = 1000");
    },
  });
  storage.db.pragma("wal_autocheckpoint = 0");
  return checkpointer;
}
