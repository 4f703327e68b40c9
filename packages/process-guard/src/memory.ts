import type { Worker } from "node:worker_threads";
import { GuardError, GuardErrorCode, type MemoryMetric } from "./errors.js";
import { rssOf, treeRssOf } from "./process-info.js";
import { ticks } from "./ticker.js";

/** Reads one memory sample, in bytes; may throw `ProcessGone`. */
export type Sampler = () => number | Promise<number>;

function unsupported(message: string): GuardError {
  return new GuardError(GuardErrorCode.UNSUPPORTED, message);
}

/** Own-process samples taken during one ticker pass are shared by every activation of that pass. */
const cache = { pass: -1, rss: 0, heap: 0 };

function ownRss(): number {
  if (cache.pass !== ticks.pass || cache.rss === 0) {
    cache.pass = ticks.pass;
    cache.rss = process.memoryUsage.rss();
    cache.heap = 0;
  }
  return cache.rss;
}

function ownHeap(): number {
  if (cache.pass !== ticks.pass || cache.heap === 0) {
    cache.pass = ticks.pass;
    const usage = process.memoryUsage();
    cache.rss = usage.rss;
    cache.heap = usage.heapUsed;
  }
  return cache.heap;
}

/** A fresh (uncached) own-process sample: the baseline at an activation's start. */
export function freshOwnSample(metric: "rss" | "heap"): number {
  cache.pass = -1;
  return metric === "rss" ? ownRss() : ownHeap();
}

function noTreeOnWindows(): void {
  if (process.platform === "win32") throw unsupported('metric "tree" is not supported on Windows');
}

/** Sampler for our own process (in-process activations). */
export function ownSampler(metric: MemoryMetric): Sampler {
  if (metric === "rss") return ownRss;
  if (metric === "heap") return ownHeap;
  noTreeOnWindows();
  return () => treeRssOf(process.pid);
}

/** Sampler for a child process or a pid. */
export function pidSampler(pid: number, metric: MemoryMetric): Sampler {
  if (metric === "heap") {
    throw unsupported('metric "heap" is not supported for a child process or pid: use "rss" or "tree"');
  }
  if (metric === "tree") {
    noTreeOnWindows();
    return () => treeRssOf(pid);
  }
  return () => rssOf(pid);
}

/** Sampler for a Worker target: its heap where Node can read it, else our own process. */
export function workerSampler(worker: Worker, metric: MemoryMetric): Sampler {
  if (metric === "heap") {
    const read = (worker as { getHeapStatistics?: () => Promise<{ used_heap_size: number }> })
      .getHeapStatistics;
    if (typeof read !== "function") {
      throw unsupported(
        `metric "heap" of a Worker needs worker.getHeapStatistics(), which Node ${process.version} lacks`,
      );
    }
    return () => read.call(worker).then((stats) => stats.used_heap_size);
  }
  return ownSampler(metric);
}
