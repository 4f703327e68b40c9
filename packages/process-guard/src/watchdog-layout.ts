import type { MessagePort } from "node:worker_threads";

/**
 * What the watchdog thread (watchdog-thread.ts) and its owner (watchdog.ts) share: the layout of the
 * `SharedArrayBuffer`s they both read and write, and what the thread is started with.
 *
 * The control block is CTL_INTS Int32 words, then CTL_FLOATS Float64 fields. A ladder chunk is SLOTS
 * slots: per slot INTS Int32 words [STATE, SENT, SIG0, SIG1, SIG2, -, -, -], then per slot FLOATS Float64
 * fields [ANCHOR, FIRST, STEP, -].
 */

/** Control word: bumped (and notified) to wake the thread. */
export const WAKE = 0;
/** Control word: the `runSync` state, one of {@link SyncState}. */
export const SYNC_STATE = 1;
/** Control word: why the thread fired, one of {@link SyncReason}. */
export const SYNC_REASON = 2;
/** The number of Int32 words of the control block. */
export const CTL_INTS = 4;
/** Control field: the clock time the `runSync` deadline counts from. */
export const F_ANCHOR = 0;
/** Control field: the `runSync` time limit, in ms. */
export const F_TIMEOUT = 1;
/** Control field: the `runSync` memory limit, in bytes (NaN: none). */
export const F_LIMIT = 2;
/** Control field: the time between memory samples, in ms. */
export const F_INTERVAL = 3;
/** Control field: the memory sample that fired, in bytes (NaN when time fired). */
export const F_OBSERVED = 4;
/** Control field: the elapsed time when the thread fired, in ms. */
export const F_ELAPSED = 5;
/** The number of Float64 fields of the control block. */
export const CTL_FLOATS = 6;

/** runSync state word: IDLE, ARMED (inside the guarded section), FIRED (the watchdog sent SIGINT). */
export const SyncState = { IDLE: 0, ARMED: 1, FIRED: 2 } as const;
/** Why the watchdog fired a `runSync` call: its time or its memory limit. */
export const SyncReason = { TIME: 1, MEMORY: 2 } as const;

/** The number of ladder slots in a chunk. */
export const SLOTS = 256;
/** The number of Int32 words per ladder slot. */
export const INTS = 8;
/** The number of Float64 fields per ladder slot. */
export const FLOATS = 4;
/** Slot word: FREE, ACTIVE or ENDED. */
export const S_STATE = 0;
/** Slot word: the highest level sent since the last restart (-1: none). */
export const S_SENT = 1;
/** Slot word: the signal number of level 0; levels 1 and 2 follow (0: none). */
export const S_SIG0 = 2;
/** Slot field: the clock time the levels count from (NaN: not running). */
export const L_ANCHOR = 0;
/** Slot field: ms from the anchor to level 0. */
export const L_FIRST = 1;
/** Slot field: ms between levels. */
export const L_STEP = 2;
/** Slot state: available to the next ladder. */
export const FREE = 0;
/** Slot state: a running ladder. */
export const ACTIVE = 1;
/** Slot state: released by its ladder; the thread frees it. */
export const ENDED = 2;

/** The thread's `workerData`. */
export interface WatchdogData {
  /** The control block. */
  control: SharedArrayBuffer;
  /** Where the owner sends each new {@link LadderChunkMessage}; read with `receiveMessageOnPort`. */
  port: MessagePort;
  /** The process to signal: the owner's. */
  pid: number;
}

/** What the owner sends on {@link WatchdogData.port}: a new ladder chunk's buffer. */
export type LadderChunkMessage = SharedArrayBuffer;

/** The control block's Int32 words and Float64 fields. */
export interface ControlBlock {
  buffer: SharedArrayBuffer;
  ints: Int32Array;
  floats: Float64Array;
}

/** Views of the control block in `buffer`; a new, zeroed block without it. */
export function controlBlock(buffer = new SharedArrayBuffer(CTL_INTS * 4 + CTL_FLOATS * 8)): ControlBlock {
  return {
    buffer,
    ints: new Int32Array(buffer, 0, CTL_INTS),
    floats: new Float64Array(buffer, CTL_INTS * 4, CTL_FLOATS),
  };
}

/** A ladder chunk: SLOTS × INTS Int32 words, then SLOTS × FLOATS Float64 fields. */
export interface LadderChunk {
  buffer: LadderChunkMessage;
  ints: Int32Array;
  floats: Float64Array;
}

/** Views of the ladder chunk in `buffer`; a new, zeroed chunk (every slot FREE) without it. */
export function ladderChunk(
  buffer = new SharedArrayBuffer(SLOTS * INTS * 4 + SLOTS * FLOATS * 8),
): LadderChunk {
  return {
    buffer,
    ints: new Int32Array(buffer, 0, SLOTS * INTS),
    floats: new Float64Array(buffer, SLOTS * INTS * 4, SLOTS * FLOATS),
  };
}
