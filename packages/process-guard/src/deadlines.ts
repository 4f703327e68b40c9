import type { Logger } from "@x/core";
import { clock } from "./clock.js";

/** Something the deadline queue calls back once a time has passed. `dueAt` and `queueIndex` are the queue's. */
export interface Timed {
  /** The clock time it is queued for (the queue's bookkeeping). */
  dueAt: number;
  /** Its place in the queue's heap; -1 when it is not queued (the queue's bookkeeping). */
  queueIndex: number;
  /** Called once `dueAt` has passed, after it has left the queue. */
  onDue(now: number): void;
  readonly logger: Logger;
}

/**
 * The deadlines of every TimeGuard activation of the process: a binary min-heap on `dueAt` and one unref'd
 * timer armed for its earliest entry, instead of a Node timer per activation.
 *
 * It is lazy in two ways, so that neither `progress()` nor a short task arms a timer as a rule:
 * - `schedule()` with a later time than the one queued changes nothing: the entry fires at the earlier
 *   time, and its owner schedules itself again for what is then due.
 * - `cancel()` leaves the timer armed: when it fires and finds nothing due, it re-arms for the earliest
 *   entry left. So sequential tasks with the same limit share one timer per limit period.
 */
class DeadlineQueue {
  readonly #heap: Timed[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (NaN: none armed). */
  #armedAt = Number.NaN;
  /** The `setTimeout` that armed it: another one now means fake timers came or went, and it may never fire. */
  #armedWith: typeof setTimeout | undefined;
  /** The `clearTimeout` that goes with it. */
  #clearWith: typeof clearTimeout = clearTimeout;

  /** The number of queued entries. */
  get size(): number {
    return this.#heap.length;
  }

  /** Makes sure `item.onDue` is called at `at` or earlier; an entry already queued for earlier stays as it is. */
  schedule(item: Timed, at: number, now: number): void {
    if (item.queueIndex >= 0) {
      if (item.dueAt <= at) return;
      item.dueAt = at;
      this.#up(item.queueIndex);
    } else {
      item.dueAt = at;
      this.#place(item, this.#heap.length);
      this.#up(item.queueIndex);
    }
    if (this.#heap[0] === item || this.#armedWith !== setTimeout) this.#arm(this.#heap[0]!.dueAt, now);
  }

  /** Takes `item` out of the queue; the timer stays armed (see the class). */
  cancel(item: Timed): void {
    const index = item.queueIndex;
    if (index < 0) return;
    item.queueIndex = -1;
    const last = this.#heap.pop()!;
    if (last === item) return;
    this.#place(last, index);
    this.#down(index);
    this.#up(last.queueIndex);
  }

  #arm(at: number, now: number): void {
    if (this.#timer !== undefined && this.#armedAt <= at && this.#armedWith === setTimeout) return;
    if (this.#timer !== undefined) this.#clearWith(this.#timer);
    this.#armedAt = at;
    this.#armedWith = setTimeout;
    this.#clearWith = clearTimeout;
    // whole ms, rounded up; Node may still fire a little early (it counts from the event loop's cached time):
    // the entry then finds itself not due and is scheduled again
    this.#timer = setTimeout(this.#fire, Math.max(1, Math.ceil(at - now)));
    this.#timer.unref();
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#armedAt = Number.NaN;
    const now = clock();
    const heap = this.#heap;
    while (heap.length > 0 && heap[0]!.dueAt <= now) {
      const item = heap[0]!;
      this.cancel(item);
      try {
        item.onDue(now);
      } catch (error) {
        item.logger.error({ err: error }, "process-guard: check failed");
      }
    }
    if (heap.length > 0) this.#arm(heap[0]!.dueAt, clock());
  };

  #up(index: number): void {
    const heap = this.#heap;
    const item = heap[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex]!;
      if (parent.dueAt <= item.dueAt) break;
      this.#place(parent, index);
      index = parentIndex;
    }
    this.#place(item, index);
  }

  #down(index: number): void {
    const heap = this.#heap;
    const item = heap[index]!;
    const length = heap.length;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= length) break;
      if (child + 1 < length && heap[child + 1]!.dueAt < heap[child]!.dueAt) child++;
      const next = heap[child]!;
      if (item.dueAt <= next.dueAt) break;
      this.#place(next, index);
      index = child;
    }
    this.#place(item, index);
  }

  /** Puts `item` at `index` of the heap (its length: at the end) and records the place on it. */
  #place(item: Timed, index: number): void {
    this.#heap[index] = item;
    item.queueIndex = index;
  }
}

/** The process's one deadline queue. */
export const deadlines = new DeadlineQueue();
