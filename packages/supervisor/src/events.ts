/** Why an input was rejected: a fetcher line, a socket command, or a directory entry. */
export type RejectReason =
  | "no-space"
  | "too-long"
  | "bad-utf8"
  | "bad-cr"
  | "bad-name"
  | "not-a-file"
  | "symlink"
  | "unreadable"
  | "unknown-command"
  | "bad-done"
  | "command-too-long"
  | "too-many-commands"
  | "tls-no-certificate"
  | "tls-untrusted-certificate"
  | "tls-expired-certificate"
  | "tls-plaintext"
  | "tls-handshake"
  | "too-many-tls-handshakes"
  | "too-many-connections";

/** Payload of the `reject` event. */
export interface RejectEvent {
  /** What was rejected: a fetcher line, a socket command, a directory entry, or a TLS connection. */
  kind: "line" | "command" | "file" | "connection";
  reason: RejectReason;
  /** The fetcher file, for `line` and `file` rejections. */
  file?: string;
  /**
   * The start of the rejected input (at most 200 bytes), with unprintable bytes escaped as `\xNN`; for a
   * `connection`, what went wrong (the TLS error, and the certificate's subject when there was one).
   */
  sample: string;
  /** For a `connection`: the client's address and port, `203.0.113.7:51234`. */
  peer?: string;
}

/** The daemon's events and their payloads; every event is emitted after the change it reports committed. */
export interface SupervisorEvents {
  /**
   * A job was dispatched to a worker; `startedAt` in epoch ms (whole seconds, as the database stores it). `holder` is the subject of the worker's
   * client certificate when it asked over TLS (absent on the Unix socket).
   */
  job: [{ attrPath: string; payload: string; startedAt: number; holder?: string }];
  /**
   * A `DONE` was accepted; `finishedAt` in epoch ms (whole seconds, as the database stores it). `holder` is the subject of the worker's client
   * certificate when it reported over TLS (absent on the Unix socket).
   */
  done: [{ attrPath: string; exitCode: number; finishedAt: number; holder?: string }];
  /** A batch of lines of a fetcher file was committed. */
  ingest: [{ fetcher: string; runStarted: number; file: string; lines: number }];
  /** A fetcher run was registered, completed or deleted. */
  run: [{ fetcher: string; runStarted: number; change: "added" | "completed" | "deleted" }];
  /** A fetcher line, socket command or directory entry was rejected (and logged, and counted). */
  reject: [RejectEvent];
}

/** Counters since the daemon started; see `Supervisor.stats()`. */
export interface SupervisorStats {
  /** Jobs handed to workers. */
  dispatched: number;
  /** `DONE` commands accepted. */
  finished: number;
  /** Fetcher lines committed to the queue. */
  linesIngested: number;
  /** Fetcher lines skipped (no space, too long, bad UTF-8, stray CR). */
  linesRejected: number;
  /** Socket commands rejected (the connection was ended). */
  commandsRejected: number;
  /**
   * Fetcher-like directory entries ignored (bad run number, a symbolic link, not a regular file, unreadable),
   * once per name.
   */
  filesIgnored: number;
  /** Connections accepted, on the Unix socket and over TLS. */
  connections: number;
  /**
   * Connections refused before a byte of the protocol was read: over TLS, no client certificate, one from
   * another CA, an expired one, plaintext, a failed or timed-out handshake, or one beyond `maxTlsHandshakes`;
   * on either listener, one beyond `maxConnections`.
   */
  connectionsRejected: number;
}

/** Counters at start: all zero. */
export function newStats(): SupervisorStats {
  return {
    dispatched: 0,
    finished: 0,
    linesIngested: 0,
    linesRejected: 0,
    commandsRejected: 0,
    filesIgnored: 0,
    connections: 0,
    connectionsRejected: 0,
  };
}

/** What the daemon's parts share: the storage, the logger, the event sink and the counters. */
export interface DaemonContext {
  readonly logger: import("@x/core").Logger;
  readonly stats: SupervisorStats;
  emit<K extends keyof SupervisorEvents>(event: K, ...payload: SupervisorEvents[K]): void;
  /** Where the listeners refuse connections: counted, reported, and logged at a bounded rate. */
  readonly refusals: import("./connection-refusals.js").ConnectionRefusals;
  /** Receives the timings that no event carries (the metrics of `serve --http`); absent: not measured. */
  observer?: DaemonObserver;
}

/** The timings the daemon's parts report besides their events. */
export interface DaemonObserver {
  /** A reply carrying a job was written `seconds` after its command (`READY` or `DONE`) was read. */
  jobReplied(command: "READY" | "DONE", seconds: number): void;
  /** Worker commands waited `seconds` for a RESTART checkpoint of an oversized WAL. */
  checkpointPaused(seconds: number): void;
}
