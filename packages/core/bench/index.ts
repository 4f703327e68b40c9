/**
 * @x/core micro-benchmarks. Prints one JSON line per figure, each beside its baseline from the same run:
 * MemoryCache set+get against a plain Map holding structuredClone copies, and backoffDelay against
 * Math.min over the same exponent.
 */
import { backoffDelay, MemoryCache } from "../src/index.js";

function measure(ops: number, body: (i: number) => void): number {
  for (let i = 0; i < Math.min(ops, 10_000); i++) body(i); // warm-up
  const started = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) body(i);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return Math.round(ops / seconds);
}

function report(bench: string, ops: number, opsPerSec: number, baseline: string, baselineOpsPerSec: number) {
  const ratio = Number((opsPerSec / baselineOpsPerSec).toFixed(3));
  console.log(JSON.stringify({ bench, ops, opsPerSec, baseline, baselineOpsPerSec, ratio }));
}

const value = { marker: new Date(0), offsets: new Map([["p0", 12n]]), seen: 3 };
const keys = Array.from({ length: 1_000 }, (_, i) => `key-${i}`);

const cacheOps = 200_000;
const cache = new MemoryCache();
const cacheRate = measure(cacheOps, (i) => {
  const key = keys[i % keys.length]!;
  cache.set(key, value);
  cache.get(key);
});
const map = new Map<string, unknown>();
const mapRate = measure(cacheOps, (i) => {
  const key = keys[i % keys.length]!;
  map.set(key, structuredClone(value));
  structuredClone(map.get(key));
});
report("MemoryCache set+get", cacheOps, cacheRate, "Map + structuredClone", mapRate);

const backoffOps = 2_000_000;
let sink = 0;
const backoffRate = measure(backoffOps, (i) => {
  sink += backoffDelay(i % 20);
});
const minRate = measure(backoffOps, (i) => {
  sink += Math.min(5_000, 100 * 2 ** (i % 20));
});
report("backoffDelay", backoffOps, backoffRate, "Math.min(cap, initial × 2^n)", minRate);
if (sink < 0) console.log(sink);
