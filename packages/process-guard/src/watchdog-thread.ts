/**
 * The watchdog thread (its owner is `Watchdog`, in watchdog.ts): it sends signals to our own process when
 * the main thread may be stuck in synchronous code. It reads everything from the `SharedArrayBuffer`s laid
 * out in watchdog-layout.ts and sleeps in `Atomics.wait` until the next deadline or until the main thread
 * notifies it. It imports nothing but Node's modules and that layout, so that it starts fast; the layout's
 * `.ts` specifier lets Node run this file from the sources too (see `startWorker` in `@x/core/internal`).
 *
 * @module
 */
import { receiveMessageOnPort, workerData } from "node:worker_threads";
import {
  ACTIVE,
  controlBlock,
  ENDED,
  F_ANCHOR,
  F_ELAPSED,
  F_INTERVAL,
  F_LIMIT,
  F_OBSERVED,
  F_TIMEOUT,
  FLOATS,
  FREE,
  INTS,
  L_ANCHOR,
  L_FIRST,
  L_STEP,
  type LadderChunk,
  type LadderChunkMessage,
  ladderChunk,
  S_SENT,
  S_SIG0,
  S_STATE,
  SLOTS,
  SYNC_REASON,
  SYNC_STATE,
  SyncReason,
  SyncState,
  WAKE,
  type WatchdogData,
} from "./watchdog-layout.ts";

const { control, port, pid } = workerData as WatchdogData;
const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now();
const clock = () => performance.now() + offset;
const { ints: ctl, floats: cf } = controlBlock(control);
const chunks: LadderChunk[] = [];
let nextMemory = 0;

function fireSync(reason: number, elapsed: number, observed: number): void {
  cf[F_ELAPSED] = elapsed;
  cf[F_OBSERVED] = observed;
  Atomics.store(ctl, SYNC_REASON, reason);
  if (Atomics.compareExchange(ctl, SYNC_STATE, SyncState.ARMED, SyncState.FIRED) !== SyncState.ARMED) return;
  try {
    process.kill(pid, "SIGINT");
  } catch {
    // the signal could not be sent: nothing else to do from here
  }
}

for (;;) {
  const seen = Atomics.load(ctl, WAKE);
  for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
    chunks.push(ladderChunk(m.message as LadderChunkMessage));
  }
  let now = clock();
  let wake = now + 60000;
  if (Atomics.load(ctl, SYNC_STATE) === SyncState.ARMED) {
    const anchor = cf[F_ANCHOR]!;
    const deadline = anchor + cf[F_TIMEOUT]!;
    if (now >= deadline) fireSync(SyncReason.TIME, now - anchor, Number.NaN);
    else {
      wake = Math.min(wake, deadline);
      const limit = cf[F_LIMIT]!;
      if (!Number.isNaN(limit)) {
        if (now >= nextMemory) {
          const rss = process.memoryUsage.rss();
          nextMemory = now + cf[F_INTERVAL]!;
          if (rss > limit) fireSync(SyncReason.MEMORY, now - anchor, rss);
        }
        wake = Math.min(wake, nextMemory);
      }
    }
  } else nextMemory = 0;
  for (const { ints, floats } of chunks) {
    for (let slot = 0; slot < SLOTS; slot++) {
      const i = slot * INTS;
      const state = Atomics.load(ints, i + S_STATE);
      if (state === ENDED) {
        Atomics.compareExchange(ints, i, ENDED, FREE);
        continue;
      }
      if (state !== ACTIVE) continue;
      const f = slot * FLOATS;
      const anchor = floats[f + L_ANCHOR]!;
      if (Number.isNaN(anchor)) continue;
      let sent = Atomics.load(ints, i + S_SENT);
      while (sent < 2) {
        const level = sent + 1;
        const due = anchor + floats[f + L_FIRST]! + level * floats[f + L_STEP]!;
        if (now < due) {
          wake = Math.min(wake, due);
          break;
        }
        if (Atomics.compareExchange(ints, i + S_SENT, sent, level) !== sent) break;
        const signal = ints[i + S_SIG0 + level]!;
        if (signal !== 0 && Atomics.load(ints, i + S_STATE) === ACTIVE) {
          try {
            process.kill(pid, signal);
          } catch {
            // the signal could not be sent: nothing else to do from here
          }
        }
        sent = level;
      }
    }
  }
  now = clock();
  if (wake > now) Atomics.wait(ctl, WAKE, seen, Math.max(1, wake - now));
}
