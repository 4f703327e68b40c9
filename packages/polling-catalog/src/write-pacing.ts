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

/** The load the commit-rate pacing aims at: writes started per write duration by all the clients of a catalog. */
const targetLoad = 0.12;
/** The chance of writing in one write duration at a client's start (slow start), and after a first rollback. */
const firstChance = 0.01;
/** What a client adds to its chance of writing when the measured load is under the target. */
const additiveStep = 0.002;
/** The lowest chance of writing in one write duration: a mean wait of about 500 write durations. */
const minChance = 0.002;
/** The write duration assumed before this client measured one, in ms. */
const assumedDurationMs = 20;
/** A wait is drawn again after this many write durations, with the load measured since. */
const redrawDurations = 10;
/** How long after this client's own commit a change notice must have arrived for notices to count, in ms. */
const noticeGraceMs = 2_000;

/**
 * Client-side pacing of writes on the catalog's commit rate (`writePacing: "commit-rate"`). Every write to a
 * table on ERMrest is rolled back when another write to that table commits while it runs, so about
 * 1 − e^(−L) of the writes abort, L being how many writes start per write duration across all clients. This
 * client keeps a chance p of starting a write in one write duration and waits an exponential draw of mean
 * d × (1/p − 1) before each write (drawn again every ten durations, so it reacts to the load while it waits):
 *
 * - it starts at p = 0.01 (slow start: twenty clients starting together do not all write at once);
 * - with change notices (during `blockingPoll`), before each write it measures L from the commits the notices
 *   announce over the last second (or 50 write durations); above 0.12 it scales p by 0.12 ÷ L, below it adds
 *   0.002 to p (at most doubling it per write, at most ×1.25 per redraw), so that all clients together keep L
 *   near 0.12 (about one write in ten rolled back) whatever their number, and clients paced apart converge to
 *   equal chances (additive increase, multiplicative decrease);
 * - a rollback quarters p (and sets it to at most 0.01);
 * - without notices (none arrived yet, or none followed one of this client's commits within 2 s), each commit
 *   raises p by 5 % and each rollback quarters it: the contention is estimated from this client's own answers.
 *
 * The price is wall time: a client alone waits about 100 write durations before its first write.
 */
export class CommitRatePacing {
  readonly #random: () => number;
  readonly #commits: number[] = [];
  #chance = firstChance;
  #durationMs = 0;
  #startMs: number | undefined;
  /** This client's earliest commit that no change notice has followed yet. */
  #unnoticedCommitMs: number | undefined;
  /** Whether a change notice ever arrived. */
  #noticed = false;

  /** @param random - source of randomness in [0, 1). Default `Math.random`. */
  constructor(random: () => number = Math.random) {
    this.#random = random;
  }

  /** The current chance of starting a write in one write duration, in (0, 1]. */
  get chance(): number {
    return this.#chance;
  }

  /** Tells the pacing that the catalog committed a write (a change notice arrived). */
  observeCommit(): void {
    const now = performance.now();
    this.#noticed = true;
    this.#unnoticedCommitMs = undefined;
    this.#commits.push(now);
    this.#trim(now);
  }

  /**
   * Waits until a write may start.
   *
   * @param _table - the table the write goes to (the pacing is shared by every table of the catalog: change
   *   notices do not say which table changed)
   * @param signal - aborting it ends the wait: rejects with `signal.reason`
   */
  async ready(_table: string, signal?: AbortSignal): Promise<void> {
    const now = performance.now();
    this.#startMs ??= now;
    // Once per write: follow the measured load, up or down (at most doubling).
    this.#follow(now, 2);
    for (;;) {
      if (this.#chance >= 1) return;
      const durationMs = this.#duration();
      const meanMs = durationMs * (1 / this.#chance - 1);
      const waitMs = -Math.log(1 - this.#random()) * meanMs;
      const chunkMs = Math.min(waitMs, redrawDurations * durationMs);
      await sleep(chunkMs, { signal });
      if (chunkMs === waitMs) return;
      // The draw is memoryless: drawing again with the load measured meanwhile is fair.
      this.#follow(performance.now(), 1.25);
    }
  }

  /**
   * Records how a write ended.
   *
   * @param _table - the table the write went to
   * @param rolledBack - whether ERMrest answered `503 Transaction aborted.`
   * @param durationMs - how long the try took
   */
  settle(_table: string, rolledBack: boolean, durationMs: number): void {
    this.#durationMs = this.#durationMs === 0 ? durationMs : 0.8 * this.#durationMs + 0.2 * durationMs;
    if (rolledBack) {
      this.#chance = Math.max(minChance, Math.min(firstChance, this.#chance / 4));
      return;
    }
    const now = performance.now();
    this.#unnoticedCommitMs ??= now;
    if (!this.#noticesWork(now)) this.#chance = Math.min(1, this.#chance * 1.05);
  }

  #duration(): number {
    return this.#durationMs === 0 ? assumedDurationMs : this.#durationMs;
  }

  /** Whether change notices arrive: one arrived, and one followed each of this client's commits within 2 s. */
  #noticesWork(now: number): boolean {
    if (!this.#noticed) return false;
    return this.#unnoticedCommitMs === undefined || now - this.#unnoticedCommitMs < noticeGraceMs;
  }

  /** Scales the chance by the target over the measured load, raising it at most `maxFactor` times. */
  #follow(now: number, maxFactor: number): void {
    if (!this.#noticesWork(now) || this.#startMs === undefined) return;
    const windowMs = this.#trim(now);
    const spanMs = Math.max(10 * this.#duration(), Math.min(windowMs, now - this.#startMs));
    const load = (this.#commits.length / spanMs) * this.#duration();
    // Above the target, every client cuts its chance by the same factor; below, every client adds the same
    // step (bounded by the growth factor): additive increase, multiplicative decrease, so that clients that
    // started apart converge to equal chances, hence equal shares of the work.
    const chance =
      load > targetLoad
        ? this.#chance * (targetLoad / load)
        : Math.min(this.#chance * maxFactor, this.#chance + additiveStep);
    this.#chance = Math.min(1, Math.max(minChance, chance));
  }

  /** Drops the commits older than the window; returns the window, in ms. */
  #trim(now: number): number {
    const windowMs = Math.max(1_000, 50 * this.#duration());
    while (this.#commits.length > 0 && (this.#commits[0] as number) < now - windowMs) this.#commits.shift();
    return windowMs;
  }
}
