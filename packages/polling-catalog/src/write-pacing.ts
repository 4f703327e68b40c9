import { sleep } from "@x/core";
import { maxRolledBackDelayMs } from "./retry.js";

/** How much a write's gap grows after each write to its table that was rolled back. */
const growOnRollback = 4;
/** How much a write's gap shrinks after each write to its table that committed. */
const shrinkOnCommit = 0.85;
/** A gap below this many ms after a commit is dropped: the client writes at once again. */
const minGapMs = 1;

/**
 * Client-side congestion control of the writes to each table, in the spirit of TCP's AIMD. On ERMrest every
 * write to a table conflicts with every other write to that table that overlaps it in time, so the share of
 * rolled-back writes is set by how many writes the clients keep in flight at once, not by which rows they touch.
 * After a write that ERMrest rolled back (`503 Transaction aborted.`), this client's next writes to that table
 * wait a gap: twice the aborted try's duration at first, four times longer at each further rollback (up to
 * the ceiling of a rolled-back request's own retry waits, 3.2 s), 15 %
 * shorter at each commit, down to none. Each wait is drawn at random (from half to 1.5 times the gap after the
 * previous write, and at least a random part of half the gap), so clients that aborted together, or that one
 * change notice woke together, do not write again together. At equilibrium (one growth undone by about nine
 * commits) about one write in ten is rolled back, whatever the number of clients.
 */
export class WritePacing {
  readonly #tables = new Map<string, { gapMs: number; lastStartMs: number }>();
  readonly #random: () => number;

  /** @param random - source of randomness in [0, 1). Default `Math.random`. */
  constructor(random: () => number = Math.random) {
    this.#random = random;
  }

  /** The current gap before a write to `table`, in ms (0 when it has not been rolled back lately). */
  gapMs(table: string): number {
    return this.#tables.get(table)?.gapMs ?? 0;
  }

  /**
   * Waits until a write to `table` may start, then records that it starts.
   *
   * @param table - the table the write goes to (see {@link writeTable})
   * @param signal - aborting it ends the wait: rejects with `signal.reason`
   */
  async ready(table: string, signal?: AbortSignal): Promise<void> {
    const state = this.#tables.get(table);
    if (state !== undefined) {
      // A gap after this client's previous write, and a random phase for a write after a pause (agents woken
      // by one change notice would otherwise all write at once).
      const now = performance.now();
      const dueMs = Math.max(
        state.lastStartMs + state.gapMs * (0.5 + this.#random()),
        now + (state.gapMs / 2) * this.#random(),
      );
      if (dueMs > now) await sleep(dueMs - now, { signal });
    }
    if (state !== undefined) state.lastStartMs = performance.now();
  }

  /**
   * Records how a write to `table` ended.
   *
   * @param table - the table the write went to
   * @param rolledBack - whether ERMrest answered `503 Transaction aborted.`
   * @param durationMs - how long the try took
   */
  settle(table: string, rolledBack: boolean, durationMs: number): void {
    const state = this.#tables.get(table);
    if (rolledBack) {
      const gapMs = Math.min(
        maxRolledBackDelayMs,
        Math.max(growOnRollback * (state?.gapMs ?? 0), 2 * durationMs),
      );
      if (state === undefined) this.#tables.set(table, { gapMs, lastStartMs: performance.now() });
      else state.gapMs = gapMs;
    } else if (state !== undefined) {
      state.gapMs *= shrinkOnCommit;
      if (state.gapMs < minGapMs) this.#tables.delete(table);
    }
  }
}

/**
 * The table a write to `path` goes to: the first segment after the API name (`S:Job` in
 * `/attributegroup/S:Job/RID;state` or `/entity/S:Job`), or the whole path when it has none.
 *
 * @param path - an ERMrest path below the catalog, starting with `/`
 */
export function writeTable(path: string): string {
  const table = path.split("/")[2]?.split(/[?;@]/)[0];
  return table === undefined || table === "" ? path : table;
}
