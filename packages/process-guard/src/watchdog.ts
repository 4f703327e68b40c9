import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import type { Logger } from "@x/core";

/**
 * The process's one watchdog worker. It sends signals to our own process when the main thread may be stuck
 * in synchronous code: the deadlines of `runSync` calls and the own-process signal levels of guards with
 * `allowProcessSignals`. It reads everything from `SharedArrayBuffer`s and sleeps in `Atomics.wait` until the
 * next deadline or until the main thread notifies it. It is started lazily and unref'd.
 */

// Control block: Int32 words, then Float64 fields.
const WAKE = 0;
/** runSync state word: IDLE, ARMED (inside the guarded section), FIRED (the watchdog sent SIGINT). */
const SYNC_STATE = 1;
/** Why it fired: 1 time, 2 memory. */
const SYNC_REASON = 2;
const CTL_INTS = 4;
const F_ANCHOR = 0;
const F_TIMEOUT = 1;
const F_LIMIT = 2;
const F_INTERVAL = 3;
const F_OBSERVED = 4;
const F_ELAPSED = 5;
const CTL_FLOATS = 6;

export const SyncState = { IDLE: 0, ARMED: 1, FIRED: 2 } as const;
export const SyncReason = { TIME: 1, MEMORY: 2 } as const;

// Ladder chunks: SLOTS slots; per slot Int32 [STATE, SENT, SIG0, SIG1, SIG2, -, -, -] and Float64 [ANCHOR, FIRST, STEP, -].
const SLOTS = 256;
const INTS = 8;
const FLOATS = 4;
const S_STATE = 0;
const S_SENT = 1;
const S_SIG0 = 2;
const L_ANCHOR = 0;
const L_FIRST = 1;
const L_STEP = 2;
const FREE = 0;
const ACTIVE = 1;
const ENDED = 2;

/** The worker's code, run with `eval: true`: no file to ship or resolve. Constants are spliced in. */
const workerSource = `
"use strict";
const { workerData, receiveMessageOnPort } = require("node:worker_threads");
const { control, port, pid } = workerData;
const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now();
const clock = () => performance.now() + offset;
const ctl = new Int32Array(control, 0, ${CTL_INTS});
const cf = new Float64Array(control, ${CTL_INTS * 4}, ${CTL_FLOATS});
const chunks = [];
let nextMemory = 0;
function fireSync(reason, elapsed, observed) {
  cf[${F_ELAPSED}] = elapsed;
  cf[${F_OBSERVED}] = observed;
  Atomics.store(ctl, ${SYNC_REASON}, reason);
  if (Atomics.compareExchange(ctl, ${SYNC_STATE}, ${SyncState.ARMED}, ${SyncState.FIRED}) !== ${SyncState.ARMED}) return;
  try { process.kill(pid, "SIGINT"); } catch {}
}
for (;;) {
  const seen = Atomics.load(ctl, ${WAKE});
  for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
    const buffer = m.message;
    chunks.push({ ints: new Int32Array(buffer, 0, ${SLOTS * INTS}), floats: new Float64Array(buffer, ${SLOTS * INTS * 4}, ${SLOTS * FLOATS}) });
  }
  let now = clock();
  let wake = now + 60000;
  if (Atomics.load(ctl, ${SYNC_STATE}) === ${SyncState.ARMED}) {
    const anchor = cf[${F_ANCHOR}];
    const deadline = anchor + cf[${F_TIMEOUT}];
    if (now >= deadline) fireSync(${SyncReason.TIME}, now - anchor, NaN);
    else {
      wake = Math.min(wake, deadline);
      const limit = cf[${F_LIMIT}];
      if (limit === limit) {
        if (now >= nextMemory) {
          const rss = process.memoryUsage.rss();
          nextMemory = now + cf[${F_INTERVAL}];
          if (rss > limit) fireSync(${SyncReason.MEMORY}, now - anchor, rss);
        }
        wake = Math.min(wake, nextMemory);
      }
    }
  } else nextMemory = 0;
  for (const { ints, floats } of chunks) {
    for (let slot = 0; slot < ${SLOTS}; slot++) {
      const i = slot * ${INTS};
      const state = Atomics.load(ints, i + ${S_STATE});
      if (state === ${ENDED}) { Atomics.compareExchange(ints, i, ${ENDED}, ${FREE}); continue; }
      if (state !== ${ACTIVE}) continue;
      const f = slot * ${FLOATS};
      const anchor = floats[f + ${L_ANCHOR}];
      if (anchor !== anchor) continue;
      let sent = Atomics.load(ints, i + ${S_SENT});
      while (sent < 2) {
        const level = sent + 1;
        const due = anchor + floats[f + ${L_FIRST}] + level * floats[f + ${L_STEP}];
        if (now < due) { wake = Math.min(wake, due); break; }
        if (Atomics.compareExchange(ints, i + ${S_SENT}, sent, level) !== sent) break;
        const signal = ints[i + ${S_SIG0} + level];
        if (signal !== 0 && Atomics.load(ints, i + ${S_STATE}) === ${ACTIVE}) {
          try { process.kill(pid, signal); } catch {}
        }
        sent = level;
      }
    }
  }
  now = clock();
  if (wake > now) Atomics.wait(ctl, ${WAKE}, seen, Math.max(1, wake - now));
}
`;

interface Chunk {
  ints: Int32Array;
  floats: Float64Array;
}

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

  constructor(watchdog: Watchdog, chunk: Chunk, slot: number) {
    this.#watchdog = watchdog;
    this.#ints = chunk.ints;
    this.#floats = chunk.floats;
    this.#i = slot * INTS;
    this.#f = slot * FLOATS;
  }

  /** Whether the watchdog worker still runs. */
  get alive(): boolean {
    return this.#watchdog.alive;
  }

  /** The highest level the watchdog has acted on since the last restart (-1: none). */
  get sent(): number {
    return Atomics.load(this.#ints, this.#i + S_SENT);
  }

  /** Moves the anchor (NaN: not running) and resets the ladder to "nothing sent". */
  restart(anchor: number): void {
    const before = this.#floats[this.#f + L_ANCHOR]!;
    this.#floats[this.#f + L_ANCHOR] = anchor;
    Atomics.store(this.#ints, this.#i + S_SENT, -1);
    // a later anchor needs no wake-up: the watchdog finds it when it wakes for the earlier one
    if (!(anchor >= before)) this.#watchdog.notify();
  }

  /** Ends the ladder; the watchdog rechecks this just before every signal and frees the slot later. */
  release(): void {
    Atomics.store(this.#ints, this.#i + S_STATE, ENDED);
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
  readonly #chunks: Chunk[] = [];
  readonly #port: MessagePort;
  readonly #worker: Worker;
  #cursor = 0;
  #dead = false;

  private constructor(logger: Logger) {
    const control = new SharedArrayBuffer(CTL_INTS * 4 + CTL_FLOATS * 8);
    this.#ctl = new Int32Array(control, 0, CTL_INTS);
    this.#cf = new Float64Array(control, CTL_INTS * 4, CTL_FLOATS);
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.#port.unref();
    this.#worker = new Worker(workerSource, {
      eval: true,
      execArgv: [],
      workerData: { control, port: port2, pid: process.pid },
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
    Atomics.add(this.#ctl, WAKE, 1);
    Atomics.notify(this.#ctl, WAKE);
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
    const total = this.#chunks.length * SLOTS;
    for (let n = 0; n < total; n++) {
      const index = (this.#cursor + n) % total;
      const chunk = this.#chunks[Math.floor(index / SLOTS)]!;
      const slot = index % SLOTS;
      if (Atomics.load(chunk.ints, slot * INTS + S_STATE) === FREE) {
        this.#cursor = index + 1;
        return this.#fill(chunk, slot, anchor, first, step, signals);
      }
    }
    const buffer = new SharedArrayBuffer(SLOTS * INTS * 4 + SLOTS * FLOATS * 8);
    const chunk = {
      ints: new Int32Array(buffer, 0, SLOTS * INTS),
      floats: new Float64Array(buffer, SLOTS * INTS * 4, SLOTS * FLOATS),
    };
    this.#chunks.push(chunk);
    this.#port.postMessage(buffer);
    this.#cursor = total + 1;
    return this.#fill(chunk, 0, anchor, first, step, signals);
  }

  #fill(
    chunk: Chunk,
    slot: number,
    anchor: number,
    first: number,
    step: number,
    signals: [number, number, number],
  ): LadderSlot {
    const i = slot * INTS;
    const f = slot * FLOATS;
    chunk.floats[f + L_ANCHOR] = anchor;
    chunk.floats[f + L_FIRST] = first;
    chunk.floats[f + L_STEP] = step;
    chunk.ints[i + S_SIG0] = signals[0];
    chunk.ints[i + S_SIG0 + 1] = signals[1];
    chunk.ints[i + S_SIG0 + 2] = signals[2];
    Atomics.store(chunk.ints, i + S_SENT, -1);
    Atomics.store(chunk.ints, i + S_STATE, ACTIVE);
    this.notify();
    return new LadderSlot(this, chunk, slot);
  }

  // ---- runSync: one call at a time (nesting is refused before arming) ----

  /** Writes a `runSync` call's limits; it is armed later, inside the guarded section. */
  prepareSync(anchor: number, timeoutMs: number, limitBytes: number, intervalMs: number): void {
    this.#cf[F_ANCHOR] = anchor;
    this.#cf[F_TIMEOUT] = timeoutMs;
    this.#cf[F_LIMIT] = limitBytes;
    this.#cf[F_INTERVAL] = intervalMs;
    Atomics.store(this.#ctl, SYNC_REASON, 0);
  }

  /** Arms the `runSync` deadline (IDLE → ARMED) and wakes the worker. */
  armSync(): void {
    Atomics.compareExchange(this.#ctl, SYNC_STATE, SyncState.IDLE, SyncState.ARMED);
    this.notify();
  }

  /** Disarms (ARMED → IDLE); `false` when the watchdog has already fired. */
  disarmSync(): boolean {
    return (
      Atomics.compareExchange(this.#ctl, SYNC_STATE, SyncState.ARMED, SyncState.IDLE) === SyncState.ARMED
    );
  }

  /** The state word of the `runSync` slot. */
  get syncState(): number {
    return Atomics.load(this.#ctl, SYNC_STATE);
  }

  /** What the watchdog recorded when it fired (elapsed time in ms, memory sample in bytes), and back to IDLE. */
  takeSyncFiring(): { reason: number; elapsedMs: number; observedBytes: number } {
    const fired = {
      reason: Atomics.load(this.#ctl, SYNC_REASON),
      elapsedMs: this.#cf[F_ELAPSED]!,
      observedBytes: this.#cf[F_OBSERVED]!,
    };
    Atomics.store(this.#ctl, SYNC_STATE, SyncState.IDLE);
    return fired;
  }

  /** Restarts the `runSync` deadline (`progress()` inside the call). */
  progressSync(anchor: number): void {
    this.#cf[F_ANCHOR] = anchor;
  }
}
