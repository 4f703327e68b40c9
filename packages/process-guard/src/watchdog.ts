import type { MessagePort, Worker } from "node:worker_threads";
import type { Logger } from "@x/core";
import { startWorker } from "@x/core/internal";
import * as layout from "./watchdog-layout.js";

/**
 * The process's one watchdog worker (watchdog-thread.ts). It sends signals to our own process when the main
 * thread may be stuck in synchronous code: the deadlines of `runSync` calls and the own-process signal
 * levels of guards with `allowProcessSignals`. It reads everything from `SharedArrayBuffer`s (laid out in
 * watchdog-layout.ts) and sleeps in `Atomics.wait` until the next deadline or until the main thread
 * notifies it. It is started lazily and unref'd.
 */

/**
 * One own-process signal ladder in the watchdog: levels fall due at `anchor + first + level × step`; the
 * watchdog sends `signals[level]` (0: none) and records the level in `sent`.
 */
export class LadderSlot {
  readonly #watchdog: Watchdog;
  readonly #ints: Int32Array;
  readonly #floats: Float64Array;
  readonly #i: number;
  readonly #f: number;

  constructor(watchdog: Watchdog, chunk: layout.LadderChunk, slot: number) {
    this.#watchdog = watchdog;
    this.#ints = chunk.ints;
    this.#floats = chunk.floats;
    this.#i = slot * layout.INTS;
    this.#f = slot * layout.FLOATS;
  }

  /** Whether the watchdog worker still runs. */
  get alive(): boolean {
    return this.#watchdog.alive;
  }

  /** The highest level the watchdog has acted on since the last restart (-1: none). */
  get sent(): number {
    return Atomics.load(this.#ints, this.#i + layout.S_SENT);
  }

  /** Moves the anchor (NaN: not running) and resets the ladder to "nothing sent". */
  restart(anchor: number): void {
    const before = this.#floats[this.#f + layout.L_ANCHOR]!;
    this.#floats[this.#f + layout.L_ANCHOR] = anchor;
    Atomics.store(this.#ints, this.#i + layout.S_SENT, -1);
    // a later anchor needs no wake-up: the watchdog finds it when it wakes for the earlier one
    if (!(anchor >= before)) this.#watchdog.notify();
  }

  /** Ends the ladder; the watchdog rechecks this just before every signal and frees the slot later. */
  release(): void {
    Atomics.store(this.#ints, this.#i + layout.S_STATE, layout.ENDED);
  }
}

/** The main thread's side of the watchdog worker. */
export class Watchdog {
  static #shared: Watchdog | undefined;

  /** The process's watchdog, started on first use. */
  static shared(logger: Logger): Watchdog {
    if (Watchdog.#shared === undefined || Watchdog.#shared.#dead) Watchdog.#shared = new Watchdog(logger);
    return Watchdog.#shared;
  }

  readonly #ctl: Int32Array;
  readonly #cf: Float64Array;
  readonly #chunks: layout.LadderChunk[] = [];
  readonly #port: MessagePort;
  readonly #worker: Worker;
  #cursor = 0;
  #dead = false;

  private constructor(logger: Logger) {
    const control = layout.controlBlock();
    this.#ctl = control.ints;
    this.#cf = control.floats;
    // loaded here, not imported: a module that only guards child processes must not load node:worker_threads
    const { MessageChannel } = process.getBuiltinModule("node:worker_threads");
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.#port.unref();
    this.#worker = startWorker(import.meta.url, "watchdog-thread", {
      workerData: { control: control.buffer, port: port2, pid: process.pid } satisfies layout.WatchdogData,
      transferList: [port2],
      stdout: true,
      stderr: false,
    });
    this.#worker.unref();
    this.#worker.on("error", (error) => {
      this.#dead = true;
      logger.error({ err: error }, "process-guard: the watchdog worker failed");
    });
    this.#worker.on("exit", () => {
      this.#dead = true;
    });
  }

  /** Whether the worker still runs. */
  get alive(): boolean {
    return !this.#dead;
  }

  /** Wakes the worker so that it recomputes its next deadline. */
  notify(): void {
    Atomics.add(this.#ctl, layout.WAKE, 1);
    Atomics.notify(this.#ctl, layout.WAKE);
  }

  /**
   * Starts an own-process signal ladder.
   *
   * @param anchor - clock time the levels count from (NaN: not running yet)
   * @param first - ms from the anchor to level 0
   * @param step - ms between levels
   * @param signals - signal numbers for levels 0, 1, 2 (0: none)
   */
  ladder(anchor: number, first: number, step: number, signals: [number, number, number]): LadderSlot {
    const total = this.#chunks.length * layout.SLOTS;
    for (let n = 0; n < total; n++) {
      const index = (this.#cursor + n) % total;
      const chunk = this.#chunks[Math.floor(index / layout.SLOTS)]!;
      const slot = index % layout.SLOTS;
      if (Atomics.load(chunk.ints, slot * layout.INTS + layout.S_STATE) === layout.FREE) {
        this.#cursor = index + 1;
        return this.#fill(chunk, slot, anchor, first, step, signals);
      }
    }
    const chunk = layout.ladderChunk();
    this.#chunks.push(chunk);
    this.#port.postMessage(chunk.buffer);
    this.#cursor = total + 1;
    return this.#fill(chunk, 0, anchor, first, step, signals);
  }

  #fill(
    chunk: layout.LadderChunk,
    slot: number,
    anchor: number,
    first: number,
    step: number,
    signals: [number, number, number],
  ): LadderSlot {
    const i = slot * layout.INTS;
    const f = slot * layout.FLOATS;
    chunk.floats[f + layout.L_ANCHOR] = anchor;
    chunk.floats[f + layout.L_FIRST] = first;
    chunk.floats[f + layout.L_STEP] = step;
    chunk.ints[i + layout.S_SIG0] = signals[0];
    chunk.ints[i + layout.S_SIG0 + 1] = signals[1];
    chunk.ints[i + layout.S_SIG0 + 2] = signals[2];
    Atomics.store(chunk.ints, i + layout.S_SENT, -1);
    Atomics.store(chunk.ints, i + layout.S_STATE, layout.ACTIVE);
    this.notify();
    return new LadderSlot(this, chunk, slot);
  }

  // ---- runSync: one call at a time (nesting is refused before arming) ----

  /** Writes a `runSync` call's limits; it is armed later, inside the guarded section. */
  prepareSync(anchor: number, timeoutMs: number, limitBytes: number, intervalMs: number): void {
    this.#cf[layout.F_ANCHOR] = anchor;
    this.#cf[layout.F_TIMEOUT] = timeoutMs;
    this.#cf[layout.F_LIMIT] = limitBytes;
    this.#cf[layout.F_INTERVAL] = intervalMs;
    Atomics.store(this.#ctl, layout.SYNC_REASON, 0);
  }

  /** Arms the `runSync` deadline (IDLE → ARMED) and wakes the worker. */
  armSync(): void {
    Atomics.compareExchange(this.#ctl, layout.SYNC_STATE, layout.SyncState.IDLE, layout.SyncState.ARMED);
    this.notify();
  }

  /** Disarms (ARMED → IDLE); `false` when the watchdog has already fired. */
  disarmSync(): boolean {
    return (
      Atomics.compareExchange(this.#ctl, layout.SYNC_STATE, layout.SyncState.ARMED, layout.SyncState.IDLE) ===
      layout.SyncState.ARMED
    );
  }

  /** The state word of the `runSync` slot. */
  get syncState(): number {
    return Atomics.load(this.#ctl, layout.SYNC_STATE);
  }

  /** What the watchdog recorded when it fired (elapsed time in ms, memory sample in bytes), and back to IDLE. */
  takeSyncFiring(): { reason: number; elapsedMs: number; observedBytes: number } {
    const fired = {
      reason: Atomics.load(this.#ctl, layout.SYNC_REASON),
      elapsedMs: this.#cf[layout.F_ELAPSED]!,
      observedBytes: this.#cf[layout.F_OBSERVED]!,
    };
    Atomics.store(this.#ctl, layout.SYNC_STATE, layout.SyncState.IDLE);
    return fired;
  }

  /** Restarts the `runSync` deadline (`progress()` inside the call). */
  progressSync(anchor: number): void {
    this.#cf[layout.F_ANCHOR] = anchor;
  }
}
