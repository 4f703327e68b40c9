// Benchmarks of @x/checkpoint: one JSON line per figure, each with a baseline measured in the same run.
// Scenario (as in docs/benchmarks/checkpoint.md): one dependency with the default checks, Date markers
// advancing by 1 s per call, a state of one numeric offset per pulse, the dependency kept ahead (no downtime),
// 10 % warm-up.
// Run: pnpm --filter @x/checkpoint bench
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Checkpoint, type CheckpointCache, Dependency, MemoryCache, SqliteCache } from "@x/checkpoint";

type Call = (i: number) => unknown;
type CacheKind = "none" | "memory" | "sqlite";

const start = Date.UTC(2025, 0, 1);
const second = (i: number) => new Date(start + i * 1_000);
const dir = mkdtempSync(join(tmpdir(), "x-checkpoint-bench-"));
let files = 0;

function openCache(kind: CacheKind): (CheckpointCache & { close?: () => Promise<void> }) | undefined {
  if (kind === "memory") return new MemoryCache();
  if (kind === "sqlite") return new SqliteCache(join(dir, `bench-${files++}.db`));
  return undefined;
}

/**
 * Calls `call(i)` for i in [from, from + ops), awaiting each result. Returns the elapsed wall-clock ms and
 * the CPU ms this process used meanwhile (user + system): on a shared machine the CPU figure shows what the
 * code costs when other processes take the cores away.
 */
async function run(call: Call, from: number, ops: number): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const began = performance.now();
  for (let i = from; i < from + ops; i++) await call(i);
  const wallMs = performance.now() - began;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1_000 };
}

/** The same, timing every call: per-call latencies in ms. */
async function latencies(call: Call, from: number, ops: number): Promise<Float64Array> {
  const times = new Float64Array(ops);
  for (let n = 0; n < ops; n++) {
    const began = performance.now();
    await call(from + n);
    times[n] = performance.now() - began;
  }
  return times.sort();
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const round = (value: number, digits = 4) => Number(value.toFixed(digits));

/** Warm-up (10 %), a throughput pass and a latency pass of `call`, then the same for `baseline`. */
async function measure(
  figure: { bench: string; cache: CacheKind; ops: number; targetOpsPerSec: number; targetP99Ms?: number },
  call: Call,
  baselineName: string,
  baseline: Call,
): Promise<void> {
  const { ops } = figure;
  const warmUp = Math.ceil(ops / 10);
  await run(call, 0, warmUp);
  const elapsed = await run(call, warmUp, ops);
  const sorted = await latencies(call, warmUp + ops, ops);
  await run(baseline, 0, warmUp);
  const baselineElapsed = await run(baseline, warmUp, ops);
  const opsPerSec = Math.round((ops / elapsed.wallMs) * 1_000);
  const baselineOpsPerSec = Math.round((ops / baselineElapsed.wallMs) * 1_000);
  const p99Ms = round(percentile(sorted, 0.99));
  const line = {
    ...figure,
    opsPerSec,
    p50Ms: round(percentile(sorted, 0.5)),
    p99Ms,
    baseline: baselineName,
    baselineOpsPerSec,
    ratio: round(opsPerSec / baselineOpsPerSec, 3),
    cpuOpsPerSec: Math.round((ops / elapsed.cpuMs) * 1_000),
    baselineCpuOpsPerSec: Math.round((ops / baselineElapsed.cpuMs) * 1_000),
    meetsTarget:
      opsPerSec >= figure.targetOpsPerSec &&
      (figure.targetP99Ms === undefined || p99Ms <= figure.targetP99Ms),
  };
  console.log(JSON.stringify(line));
}

/** checkPulse with the dependency far ahead; baseline: the pulse's two writes (state, marker) done directly. */
async function checkPulse(kind: CacheKind, ops: number, targetOpsPerSec: number, targetP99Ms?: number) {
  const cache = openCache(kind);
  const cp = new Checkpoint("bench", { dependencies: [new Dependency("dep")], cache });
  await cp.heartbeat(second(10 * ops));
  const direct = openCache(kind);
  let state: Record<string, unknown> = {};
  const baseline: Call = direct
    ? (i) => {
        state = { ...state, offset: i };
        direct.set("__bench__state", state);
        direct.set("__bench__state_marker", second(i));
      }
    : (i) => {
        state = { ...state, offset: i };
        return second(i);
      };
  await measure(
    {
      bench: "checkPulse",
      cache: kind,
      ops,
      targetOpsPerSec,
      ...(targetP99Ms === undefined ? {} : { targetP99Ms }),
    },
    (i) => cp.checkPulse(second(i), { offset: i }),
    direct ? `the same 2 ${kind} cache writes, direct` : "the inputs alone (Date and state objects)",
    baseline,
  );
  await cache?.close?.();
  await direct?.close?.();
}

/** heartbeat ahead of the dependent; baseline: the heartbeat's two writes (snapshot, marker) done directly. */
async function heartbeat(kind: CacheKind, ops: number, targetOpsPerSec: number) {
  const cache = openCache(kind);
  const cp = new Checkpoint("bench", { dependencies: [new Dependency("dep")], cache });
  await cp.checkPulse(second(0), { offset: 0 });
  const direct = openCache(kind);
  const state = { offset: 0 };
  const baseline: Call = direct
    ? (i) => {
        direct.set("__bench_dep_checkpoint_state", { ...state });
        direct.set("__bench_dep_checkpoint_marker", second(i));
      }
    : (i) => second(i);
  await measure(
    { bench: "heartbeat", cache: kind, ops, targetOpsPerSec },
    (i) => cp.heartbeat(second(i)),
    direct ? `the same 2 ${kind} cache writes, direct` : "the inputs alone (Date objects)",
    baseline,
  );
  await cache?.close?.();
  await direct?.close?.();
}

try {
  await checkPulse("none", 1_000_000, 1_000_000);
  await heartbeat("none", 1_000_000, 1_000_000);
  await checkPulse("memory", 300_000, 200_000);
  await heartbeat("memory", 300_000, 200_000);
  await checkPulse("sqlite", 50_000, 10_000, 1);
  await heartbeat("sqlite", 50_000, 10_000);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
