import type { Worker } from "node:worker_threads";
import { ErrorCode, GuardError, type MemoryMetric } from "./errors.js";
import { hasProcfs, ownRss as readOwnRss, rssOf } from "./process-info.js";
import { hasChildrenFiles, ProcTreeSampler, sumTree, treeRssOf } from "./process-tree.js";
import { ticks } from "./ticker.js";

/** Reads one memory sample, in bytes; may throw `ProcessGone`. `close()` releases what it holds between samples. */
export type Sampler = (() => number | Promise<number>) & { close?(): void };

function unsupported(message: string): GuardError {
  return new GuardError(ErrorCode.UNSUPPORTED, message);
}

/** Own-process samples taken during one ticker pass are shared by every activation of that pass. */
const cache = { rssPass: -1, rss: 0, heapPass: -1, heap: 0 };

function ownRss(): number {
  if (cache.rssPass !== ticks.pass) {
    cache.rss = readOwnRss();
    cache.rssPass = ticks.pass;
  }
  return cache.rss;
}

/** `node:v8`, loaded by the first heap sample: an ESM import of it would cost every x-guard start. */
let v8: typeof import("node:v8") | undefined;

function ownHeap(): number {
  if (cache.heapPass !== ticks.pass) {
    // the figure of process.memoryUsage().heapUsed, without the rest of memoryUsage() (20× cheaper)
    v8 ??= process.getBuiltinModule("node:v8");
    cache.heap = v8.getHeapStatistics().used_heap_size;
    cache.heapPass = ticks.pass;
  }
  return cache.heap;
}

/** A fresh (uncached) own-process sample: the baseline at an activation's start. */
export function freshOwnSample(metric: "rss" | "heap"): number {
  if (metric === "rss") {
    cache.rssPass = -1;
    return ownRss();
  }
  cache.heapPass = -1;
  return ownHeap();
}

/**
 * The RSS of `root`'s tree: on Linux by a {@link ProcTreeSampler}, which keeps the tree's files open from one
 * sample to the next; elsewhere by `treeRssOf`.
 */
function treeSampler(root: number): Sampler {
  if (process.platform === "win32") throw unsupported('metric "tree" is not supported on Windows');
  if (!hasProcfs || !hasChildrenFiles()) return () => treeRssOf(root);
  const tree = new ProcTreeSampler(root);
  return Object.assign(() => sumTree(tree.sample()), { close: () => tree.close() });
}

/** Sampler for our own process (in-process activations). */
export function ownSampler(metric: MemoryMetric): Sampler {
  if (metric === "rss") return ownRss;
  if (metric === "heap") return ownHeap;
  return treeSampler(process.pid);
}

/** Sampler for a child process or a pid. */
export function pidSampler(pid: number, metric: MemoryMetric): Sampler {
  if (metric === "heap") {
    throw unsupported('metric "heap" is not supported for a child process or pid: use "rss" or "tree"');
  }
  if (metric === "tree") return treeSampler(pid);
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
