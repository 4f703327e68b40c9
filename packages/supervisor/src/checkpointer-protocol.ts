/**
 * The messages between the checkpoint thread (checkpointer-thread.ts) and its owner, `Checkpointer`
 * (checkpointer.ts).
 */

/** The checkpoint thread's `workerData`. */
export interface CheckpointerData {
  /** The resolved path of the `better-sqlite3` module the thread loads (the daemon's own). */
  driver: string;
  /** The database file (already open, in WAL mode, by the daemon). */
  path: string;
  /** Time between PASSIVE checkpoints, in ms. */
  intervalMs: number;
  /** The WAL size past which the thread reports `over-cap`, in bytes. */
  walCapBytes: number;
  /** How long a checkpoint waits for a lock (`busy_timeout`), in ms. */
  lockWaitMs: number;
}

/** What the owner asks the thread: one RESTART checkpoint now, or to close its connection and exit. */
export type CheckpointerCommand = "restart" | "stop";

/** What the checkpoint thread reports. */
export type CheckpointerReport =
  | { kind: "failed"; error: string }
  | { kind: "over-cap"; walBytes: number }
  | { kind: "restarted"; restarted: boolean; ms: number };
