// Runs one leg of the test suite, as CI runs it on each Node line, and ends with the leg's totals as one plain
// line, "N passed, M failed" (", K skipped" when some were). See "Test tiers" in the root README.
//
//   node scripts/test-leg.mjs full      every test once: the fast tier, then the slow tier and the type
//                                       tests (both with addresses where nothing listens: the unit tiers must
//                                       pass without a broker or a database), then the services tier
//   node scripts/test-leg.mjs runtime   what can behave differently on another Node line: the fast tier (all
//                                       the logic, on this runtime's V8, timers and native SQLite binding), and
//                                       the files listed in runtimeSensitive below
//
// `--part fast` runs a leg's fast tier alone, `--part rest` the rest of it: CI runs the fast tiers, which need
// no service, beside the system tests, which restart the broker (.ci/run).
// Every step runs even when one before it failed; the exit status is the first failure's.
import { spawn } from "node:child_process";
import { globSync } from "node:fs";

/** The unit tiers run with these: addresses where nothing listens, so a test that needs a service fails. */
const noServices = { AMQP_URL: "amqp://127.0.0.1:1", PGURL: "postgres://127.0.0.1:1/x" };

/**
 * Slow and services files that run on Node 22 and 26 too, each because what it tests is the runtime's own
 * behaviour rather than ours on top of it: processes, signals, worker threads, memory, V8's code cache,
 * native and network drivers. The other slow and services files test our protocols and recoveries over real
 * services, which do not change with the Node line; they run on Node 24 only.
 */
export const runtimeSensitive = [
  // child processes, process groups, signals, memory sampling, worker threads, V8 code cache: all of it
  "packages/process-guard/src/*.slow.test.ts",
  "packages/process-guard/test/*.slow.test.ts",
  // stdin/stdout/stderr behaviour of the CLIs (pipes, EPIPE, /dev/full)
  "packages/core/src/stdio.slow.test.ts",
  // the supervisor's checkpointer worker thread, and a daemon's signals and crash recovery
  "packages/supervisor/src/checkpointer.slow.test.ts",
  "packages/supervisor/test/cli-signals.slow.test.ts",
  "packages/supervisor/test/crash.slow.test.ts",
  // mutual TLS through this runtime's OpenSSL
  "packages/supervisor/test/tls.slow.test.ts",
  // the optional database drivers loaded on first use (better-sqlite3's binary for this ABI, pg)
  "packages/rmq-storage/test/drivers.slow.test.ts",
  // one file per network client library: amqplib, pg, redis, nats
  "packages/rmq-storage/test/postgres-storage.services.test.ts",
  "packages/rmq-storage/test/rmq-storage.services.test.ts",
  "packages/checkpoint/test/redis-stream.services.test.ts",
  "packages/checkpoint/test/nats-stream.services.test.ts",
  "packages/polling-catalog/test/fake-notices.services.test.ts",
];

const fastTier = [
  "scripts/test-summary.mjs",
  "--exclude",
  "**/*.services.test.ts",
  "--exclude",
  "**/*.slow.test.ts",
];
const fast = {
  name: "fast tier",
  env: { X_TEST_TIER: "fast", ...noServices },
  args: [...fastTier, "--maxWorkers=4", "--no-isolate"],
};

/** The files a glob list names; a pattern that names none is an error, so a rename cannot drop a file. */
function filesOf(patterns) {
  return patterns.flatMap((pattern) => {
    const found = globSync(pattern);
    if (found.length === 0) throw new Error(`test-leg: ${pattern} names no test file`);
    return found;
  });
}

const legs = {
  full: [
    fast,
    {
      name: "slow tier and type tests",
      env: noServices,
      args: ["scripts/test-summary.mjs", "--exclude", "**/*.services.test.ts", ".slow.test.ts", ".test-d.ts"],
    },
    { name: "services tier", env: {}, args: ["scripts/test-summary.mjs", ".services.test.ts"] },
  ],
  runtime: [
    fast,
    {
      name: "runtime-sensitive slow and services files",
      env: {},
      args: ["scripts/test-summary.mjs", ...filesOf(runtimeSensitive)],
    },
  ],
};

/** Runs one step, its output passed through, and resolves to its exit code and its totals. */
function run(step) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, step.args, {
      env: { ...process.env, ...step.env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let tail = "";
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk).slice(-4096);
    });
    child.on("close", (code) => {
      const line = tail.match(/^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/m);
      // a step that printed no totals crashed: one failure
      const totals = line ? line.slice(1, 4).map((n) => Number(n ?? 0)) : [0, 1, 0];
      resolve({ code: code ?? 1, totals });
    });
  });
}

const [name, partFlag, part] = process.argv.slice(2);
const parts = { fast: (step) => step === fast, rest: (step) => step !== fast };
const partOk = partFlag === undefined || (partFlag === "--part" && part in parts);
if (!(name in legs) || !partOk) {
  console.error(`usage: node scripts/test-leg.mjs ${Object.keys(legs).join("|")} [--part fast|rest]`);
  process.exit(64);
}
const leg = legs[name].filter(part === undefined ? () => true : parts[part]);
let status = 0;
const sum = [0, 0, 0];
for (const step of leg) {
  console.log(`== ${step.name}`);
  const { code, totals } = await run(step);
  if (code !== 0 && status === 0) status = code;
  totals.forEach((n, i) => {
    sum[i] += n;
  });
}
console.log(`${sum[0]} passed, ${sum[1]} failed${sum[2] ? `, ${sum[2]} skipped` : ""}`);
process.exit(status);
