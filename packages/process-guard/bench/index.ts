/**
 * @x/process-guard benchmarks. Prints one JSON line per figure, `{"name", "value", "unit", …}`, each beside
 * its target and, where there is one, a baseline measured in the same run:
 *
 * - `run() overhead`: `await tg.run(async () => 1)` minus a bare `await (async () => 1)()`, against the same
 *   for `pTimeout((async () => 1)(), { milliseconds: 60_000 })`.
 * - `interrupt latency`: from each activation's deadline to its AbortSignal's `abort` event, at checkIntervalMs
 *   20 and 500 (p50, p99, max over ≥ 200 activations): each activation's timer fires at its deadline, so the
 *   interval should not matter.
 * - `memory sample`: one own-process sample with the guard's bookkeeping (an activation's check), per metric.
 * - `tree sample (10 processes)`: the processes of a 10-process tree and their RSS, as a MemGuard with metric
 *   `"tree"` samples them (following the tree's `/proc/<pid>/task/<tid>/children` files, kept open between
 *   samples), beside the same walk opening every file afresh and the scan of all of `/proc` it replaced.
 * - `10k active activations`: heap and RSS growth after GC (each holds one unref'd timer for its deadline),
 *   and the event-loop delay while they are active, each beside the same 10 000 pending tasks without a guard.
 * - `reaper`: what the reaper adds to each `runGuardedCommand()`: the time per command (`true`) with and
 *   without it, and the reaper's RSS beside that of a minimal Node process doing the same wait.
 *
 * `--only=<name>` runs one of them: `overhead`, `latency`, `sample`, `tree`, `activations`, `reaper`.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import pTimeout from "p-timeout";
import { Activation } from "../src/activation.js";
import { clock } from "../src/clock.js";
import { memGuard, runGuardedCommand, timeGuard } from "../src/index.js";
import { followProcTree, ProcTreeSampler, scanProcTree } from "../src/process-tree.js";
import { InProcessTarget } from "../src/targets.js";
import { ticks } from "../src/ticker.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const quick = process.argv.includes("--quick");
const only = process.argv.find((arg) => arg.startsWith("--only="))?.slice("--only=".length);

function report(figure: Record<string, unknown>): void {
  console.log(JSON.stringify(figure));
}

const round = (value: number, digits = 3) => Number(value.toFixed(digits));

/** Mean time per call of `body` in µs, over `calls` sequential awaited calls (best of `rounds`). */
async function perCall(calls: number, body: () => Promise<unknown>, rounds = 5): Promise<number> {
  for (let i = 0; i < Math.min(calls, 20_000); i++) await body(); // warm-up
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await body();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e3 / calls);
  }
  return best;
}

async function runOverhead(): Promise<void> {
  const calls = quick ? 20_000 : 200_000;
  const guard = timeGuard({ timeoutMs: 60_000 });
  const task = async () => 1;
  const bare = await perCall(calls, () => task());
  const guarded = await perCall(calls, () => guard.run(task));
  const timed = await perCall(calls, () => pTimeout(task(), { milliseconds: 60_000 }));
  const overhead = guarded - bare;
  const pTimeoutOverhead = timed - bare;
  report({
    name: "run() overhead",
    value: round(overhead),
    unit: "µs/call",
    target: "≤ 5 µs and ≤ 3× p-timeout's",
    bareAwait: round(bare),
    pTimeoutOverhead: round(pTimeoutOverhead),
    ratioToPTimeout: round(overhead / pTimeoutOverhead, 2),
    calls,
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function interruptLatency(checkIntervalMs: number): Promise<void> {
  // collect the earlier benchmarks' garbage first: a major GC in the middle pauses every timer alike
  gc();
  gc();
  const count = 240;
  const spread = checkIntervalMs * 3;
  // baseline in the same run: a bare setTimeout for each deadline, interleaved with the guarded tasks, shows
  // how late the event loop itself runs timers on this machine at that moment
  const bare: Promise<number>[] = [];
  const latencies = await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const timeoutMs = 50 + (i / count) * spread;
      const guard = timeGuard({ timeoutMs, checkIntervalMs, gracePeriodMs: 600_000 });
      const deadline = clock() + timeoutMs;
      bare.push(
        new Promise((resolve) => {
          const bareDeadline = clock() + timeoutMs;
          setTimeout(() => resolve(clock() - bareDeadline), timeoutMs);
        }),
      );
      return guard.run(
        ({ signal }) =>
          new Promise<number>((resolve) => {
            signal.addEventListener("abort", () => resolve(clock() - deadline), { once: true });
          }),
      );
    }),
  );
  const bareSorted = (await Promise.all(bare)).sort((a, b) => a - b);
  // (each activation starts just after its `deadline` was computed: the figures err on the high side)
  const sorted = latencies.sort((a, b) => a - b);
  report({
    name: `interrupt latency (checkIntervalMs ${checkIntervalMs})`,
    value: round(percentile(sorted, 99), 1),
    unit: "ms (p99)",
    target: "≤ 5 ms",
    p50: round(percentile(sorted, 50), 1),
    max: round(sorted[sorted.length - 1]!, 1),
    min: round(sorted[0]!, 1),
    bareTimerP99: round(percentile(bareSorted, 99), 1),
    bareTimerMax: round(bareSorted[bareSorted.length - 1]!, 1),
    activations: count,
  });
}

function memorySample(metric: "rss" | "heap" | "tree"): void {
  const guard = memGuard({ maxMemoryBytes: Number.MAX_SAFE_INTEGER, metric, checkIntervalMs: 60_000 });
  const activation = new Activation(guard, {
    target: new InProcessTarget(guard.config),
    parent: undefined,
    onExternal: "abort",
    ownProcess: true,
  });
  const samples = metric === "tree" ? (quick ? 50 : 500) : quick ? 5_000 : 50_000;
  const once = () => {
    ticks.pass++; // a new check each time: no per-pass sharing
    activation.tick(clock());
  };
  for (let i = 0; i < Math.min(samples, 1_000); i++) once();
  const started = process.hrtime.bigint();
  for (let i = 0; i < samples; i++) once();
  const perSample = Number(process.hrtime.bigint() - started) / 1e3 / samples;
  activation.end();
  report({
    name: `memory sample (${metric})`,
    value: round(perSample, 2),
    unit: "µs/sample",
    target: metric === "tree" ? "none (our own process: one children file per thread)" : "≤ 50 µs",
    samples,
  });
}

/** A tree of 10 processes (sh and 9 sleeps), sampled both ways, with the same processes found by each. */
async function treeSample(): Promise<void> {
  const root = spawn("sh", ["-c", "for i in 1 2 3 4 5 6 7 8 9; do sleep 60 & done; wait"], {
    detached: true,
    stdio: "ignore",
  });
  const pid = root.pid!;
  try {
    while (scanProcTree(pid).size < 10) await new Promise((resolve) => setTimeout(resolve, 20));
    const samples = quick ? 200 : 2_000;
    const perSample = (sample: (root: number) => Map<number, number>, count: number) => {
      for (let i = 0; i < Math.min(count, 100); i++) sample(pid);
      let best = Number.POSITIVE_INFINITY; // best of 3: the machine is shared
      for (let round = 0; round < 3; round++) {
        const started = process.hrtime.bigint();
        for (let i = 0; i < count; i++) sample(pid);
        best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e3 / count);
      }
      return best;
    };
    const sampler = new ProcTreeSampler(pid);
    const sampled = perSample(() => sampler.sample(), samples);
    sampler.close();
    const followed = perSample(followProcTree, samples);
    const scanned = perSample(scanProcTree, Math.max(20, samples / 20));
    const same =
      [...followProcTree(pid).keys()].sort().join() === [...scanProcTree(pid).keys()].sort().join();
    report({
      name: "tree sample (10 processes)",
      value: round(sampled, 1),
      unit: "µs/sample",
      target: "≤ 100 µs",
      filesOpenedEachTime: round(followed, 1),
      scanAllOfProcBaseline: round(scanned, 1),
      processesOnMachine: readdirSync("/proc").filter((name) => /^\d+$/.test(name)).length,
      sameProcesses: same,
      samples,
    });
  } finally {
    process.kill(-pid, "SIGKILL");
  }
}

/** Heap and RSS growth (after GC) and event-loop delay while 10 000 tasks are pending under `start`. */
async function pending(
  start: (task: () => Promise<void>) => Promise<unknown>,
  activeFor: number,
): Promise<{ heap: number; rss: number; maxDelayMs: number; meanDelayMs: number }> {
  gc();
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const rssBefore = process.memoryUsage.rss();
  const release: (() => void)[] = [];
  const runs = Array.from({ length: 10_000 }, () =>
    start(() => new Promise<void>((resolve) => release.push(resolve))),
  );
  gc(); // the delay is measured while they are active, not while they are created
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  await new Promise((resolve) => setTimeout(resolve, activeFor));
  delay.disable();
  gc();
  gc();
  const heap = process.memoryUsage().heapUsed - heapBefore;
  const rss = process.memoryUsage.rss() - rssBefore;
  for (const done of release) done();
  await Promise.all(runs);
  return { heap, rss, maxDelayMs: delay.max / 1e6, meanDelayMs: delay.mean / 1e6 };
}

async function manyActive(): Promise<void> {
  const guard = timeGuard({ timeoutMs: 3_600_000, checkIntervalMs: 500 });
  const activeFor = quick ? 1_100 : 3_100; // several checks of all 10 000
  // baseline in the same run: the same 10 000 pending tasks without a guard
  const bare = await pending((task) => task(), activeFor);
  const guarded = await pending((task) => guard.run(task), activeFor);
  const mb = (bytes: number) => round(bytes / 1024 / 1024, 2);
  report({
    name: "10 000 active activations: memory",
    value: mb(guarded.heap - bare.heap),
    unit: "MB of heap (growth after GC, beyond the same tasks unguarded)",
    target: "≤ 20 MB",
    heapGrowthMb: mb(guarded.heap),
    rssGrowthMb: mb(guarded.rss),
    baselineHeapGrowthMb: mb(bare.heap),
    baselineRssGrowthMb: mb(bare.rss),
    activations: 10_000,
  });
  report({
    name: "10 000 active activations: event-loop delay",
    value: round(guarded.maxDelayMs, 1),
    unit: "ms (max)",
    target: "≤ 20 ms",
    meanMs: round(guarded.meanDelayMs, 2),
    baselineMaxMs: round(bare.maxDelayMs, 1),
    baselineMeanMs: round(bare.meanDelayMs, 2),
    activeMs: activeFor,
  });
}

/** VmRSS of `pid`, in bytes. */
function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB$/m);
  return Number(line?.[1]) * 1024;
}

/** A reaper this process started (`sh -c … x-guard-reaper`), found by its command line and parent. */
function findReaper(): number | undefined {
  for (const name of readdirSync("/proc")) {
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (argv[3] === "x-guard-reaper" && ppid === process.pid) return Number(name);
    } catch {
      // not a process, or gone
    }
  }
  return undefined;
}

async function reaperCost(): Promise<void> {
  const commands = quick ? 40 : 200;
  const perCommand = async (reaper: boolean) => {
    const times: number[] = [];
    for (let i = 0; i < commands; i++) {
      const started = performance.now();
      await runGuardedCommand("true", [], { stdio: "ignore", timeoutMs: 60_000, reaper });
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b);
  };
  await perCommand(true); // warm-up
  // interleaved rounds, so that the load of the moment falls on both alike
  const withReaper: number[] = [];
  const without: number[] = [];
  for (let round = 0; round < 3; round++) {
    without.push(...(await perCommand(false)));
    withReaper.push(...(await perCommand(true)));
  }
  withReaper.sort((a, b) => a - b);
  without.sort((a, b) => a - b);
  const median = (sorted: number[]) => percentile(sorted, 50);
  report({
    name: "reaper: time per command",
    value: round(median(withReaper) - median(without), 2),
    unit: "ms (median with reaper - median without)",
    target: "≤ 5 ms",
    medianWithMs: round(median(withReaper), 2),
    medianWithoutMs: round(median(without), 2),
    p99WithMs: round(percentile(withReaper, 99), 2),
    p99WithoutMs: round(percentile(without, 99), 2),
    commands: withReaper.length,
  });

  let reaperRss = 0;
  await runGuardedCommand("sleep", ["1"], {
    stdio: "ignore",
    timeoutMs: 60_000,
    onSpawn: () => {
      // once it waits on its pipe, armed
      setTimeout(() => {
        const reaper = findReaper();
        if (reaper !== undefined) reaperRss = rssBytes(reaper);
      }, 500);
    },
  });
  // the alternative: a Node script that waits on its stdin the same way
  const node = spawn(process.execPath, ["-e", "process.stdin.resume()"], {
    stdio: ["pipe", "ignore", "ignore"],
  });
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // let it finish starting
  const nodeRss = rssBytes(node.pid!);
  node.stdin.end();
  const nodeStarted = performance.now();
  await new Promise<void>((resolve) => {
    const probe = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    probe.once("exit", () => resolve());
  });
  const nodeStartMs = performance.now() - nodeStarted;
  const mb = (bytes: number) => round(bytes / 1024 / 1024, 2);
  report({
    name: "reaper: memory",
    value: mb(reaperRss),
    unit: "MB of RSS (one /bin/sh per command)",
    target: "≤ 5 MB",
    nodeAlternativeRssMb: mb(nodeRss),
    nodeAlternativeStartMs: round(nodeStartMs, 1),
  });
}

const benchmarks: Record<string, () => Promise<void> | void> = {
  overhead: runOverhead,
  latency: async () => {
    await interruptLatency(20);
    await interruptLatency(500);
  },
  sample: () => {
    memorySample("rss");
    memorySample("heap");
    memorySample("tree");
  },
  tree: treeSample,
  activations: manyActive,
  reaper: reaperCost,
};

// the guards' timers are unref'd and never keep a process alive: this does, while the benchmarks wait
const keepAlive = setInterval(() => {}, 1_000);
for (const [name, bench] of Object.entries(benchmarks)) {
  if (only === undefined || only === name) await bench();
}
clearInterval(keepAlive);
