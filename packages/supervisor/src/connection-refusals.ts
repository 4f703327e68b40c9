import type { DaemonContext, RejectReason } from "./events.js";

/** How long one window of the refusal log lasts, in ms. */
export const refusalWindowMs = 10_000;
/** Refusals logged one by one in a window, at most; the others are summed up in one line at its end. */
export const refusalsLoggedPerWindow = 10;

/** One refused connection. */
export interface Refusal {
  reason: RejectReason;
  /** What went wrong, for the log and the `reject` event. */
  sample: string;
  /** The client's `address:port`, when known. */
  peer?: string;
}

/**
 * Refuses connections on behalf of the daemon's listeners: each refusal is counted (`connectionsRejected`)
 * and reported as a `reject` event of kind `connection`, but only the first {@link refusalsLoggedPerWindow}
 * of each {@link refusalWindowMs} window are logged one by one; the others are counted by reason and logged
 * as one line when the window ends (`refused 5123 more connections in the last 10 s: …`), so that a flood of
 * connections cannot flood the log too.
 */
export class ConnectionRefusals {
  #context: Pick<DaemonContext, "logger" | "stats" | "emit">;
  /** When the current window started, `performance.now()`. */
  #windowStart = Number.NEGATIVE_INFINITY;
  /** Refusals logged one by one in the current window. */
  #logged = 0;
  /** Refusals not logged yet, by reason. */
  #unlogged = new Map<RejectReason, number>();
  /** Logs the unlogged refusals when the window ends. */
  #timer: NodeJS.Timeout | undefined;

  /** @param context - the daemon's logger, counters and events */
  constructor(context: Pick<DaemonContext, "logger" | "stats" | "emit">) {
    this.#context = context;
  }

  /**
   * Counts, reports and logs (see the class) one refused connection, which the caller closes.
   *
   * @param message - the log line's message when it is logged one by one
   */
  refuse(refusal: Refusal, message: string): void {
    this.#context.stats.connectionsRejected++;
    this.#context.emit("reject", { kind: "connection", ...refusal });
    const now = performance.now();
    if (now - this.#windowStart >= refusalWindowMs) {
      this.flush();
      this.#windowStart = now;
      this.#logged = 0;
    }
    if (this.#logged < refusalsLoggedPerWindow) {
      this.#logged++;
      this.#context.logger.warn({ ...refusal }, message);
      return;
    }
    this.#unlogged.set(refusal.reason, (this.#unlogged.get(refusal.reason) ?? 0) + 1);
    this.#timer ??= setTimeout(() => this.flush(), this.#windowStart + refusalWindowMs - now).unref();
  }

  /** Logs the refusals not logged yet, in one line; the daemon also calls it when it stops. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#unlogged.size === 0) return;
    // The most frequent reason first.
    const counts = [...this.#unlogged].sort((a, b) => b[1] - a[1]);
    this.#unlogged.clear();
    const reasons = Object.fromEntries(counts);
    const refused = counts.reduce((sum, [, n]) => sum + n, 0);
    const seconds = Math.ceil((performance.now() - this.#windowStart) / 1000);
    const byReason = counts.map(([reason, n]) => `${reason} ${n}`).join(", ");
    this.#context.logger.warn(
      { refused, reasons },
      `refused ${refused} more connections in the last ${seconds} s: ${byReason}`,
    );
  }
}
