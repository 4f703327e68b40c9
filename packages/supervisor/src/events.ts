/** Why an input was rejected: a fetcher line, a socket command, or a directory entry. */
export type RejectReason =
  | "no-space"
  | "too-long"
  | "bad-utf8"
  | "bad-cr"
  | "bad-name"
  | "not-a-file"
  | "unreadable"
  | "unknown-command"
  | "bad-done"
  | "command-too-long";

/** Payload of the `reject` event. */
export interface RejectEvent {
  /** What was rejected. */
  kind: "line" | "command" | "file";
  reason: RejectReason;
  /** The fetcher file, for `line` and `file` rejections. */
  file?: string;
  /** The start of the rejected input (at most 200 bytes), with unprintable bytes escaped as `\xNN`. */
  sample: string;
}

/** The daemon's events and their payloads; every event is emitted after the change it reports committed. */
export interface SupervisorEvents {
  /** A job was dispatched to a worker; `startedAt` in unix seconds. */
  job: [{ attrPath: string; payload: string; startedAt: number }];
  /** A `DONE` was accepted; `finishedAt` in unix seconds. */
  done: [{ attrPath: string; exitCode: number; finishedAt: number }];
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
  /** Fetcher-like directory entries ignored (bad run number, not a regular file, unreadable), once per name. */
  filesIgnored: number;
  /** Connections accepted. */
  connections: number;
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
  };
}

/** What the daemon's parts share: the storage, the logger, the event sink and the counters. */
export interface DaemonContext {
  readonly logger: import("@x/core").Logger;
  readonly stats: SupervisorStats;
  emit<K extends keyof SupervisorEvents>(event: K, ...payload: SupervisorEvents[K]): void;
}
