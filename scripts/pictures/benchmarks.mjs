// The benchmark plots, each drawn from the JSON figures recorded in a docs/benchmarks/*.md file. Where a doc
// records several runs, the first (the newest, at the top) is drawn.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fencedBlocks } from "../docs/fenced-blocks.mjs";
import { barChart } from "./charts.mjs";

/** Every JSON line of every `json` block (or block without a language) of a Markdown file, in order. */
export function recordedFigures(path) {
  return fencedBlocks(readFileSync(path, "utf8"))
    .filter((block) => block.language === "json" || block.language === "")
    .flatMap((block) => block.code.split("\n"))
    .filter((line) => line.trim().startsWith("{"))
    .map((line) => JSON.parse(line));
}

/** The first recorded figure with every field of `match`; throws when the doc has none, naming it. */
function first(figures, match) {
  const found = figures.find((figure) =>
    Object.entries(match).every(([key, value]) => figure[key] === value),
  );
  if (!found) throw new Error(`no recorded figure matches ${JSON.stringify(match)}`);
  return found;
}

/** polling-catalog: requests per claimed row, and insert→claim latency with notices and by polling. */
function pollingCatalog(figures) {
  // Requests per completed row on the fake's realistic mode, unpaced: today's spread (it records claimRows) and the
  // spread it replaced (measured with the same fake, before claimRows existed).
  const spreadFigure = (agents, current) =>
    figures.find(
      (figure) =>
        figure.bench === "polling-catalog.claim-spread" &&
        figure.agents === agents &&
        figure.requestsPerCompletedRow !== undefined &&
        // The library's default: unpaced (figures from before the bench recorded writePacing were unpaced).
        (figure.writePacing === undefined || figure.writePacing === false) &&
        (figure.claimRows !== undefined) === current,
    );
  const spread = (agents, current) => spreadFigure(agents, current)?.requestsPerCompletedRow;
  const today = spreadFigure(20, true);
  const completions =
    today?.completion === "one PUT per batch" ? "one completion PUT per batch" : "with completions";
  const limit1 = first(figures, { bench: "polling-catalog.claim-limit-1", agents: 20 });
  const notices = first(figures, { bench: "polling-catalog.latency-notices" });
  const polling = first(figures, { bench: "polling-catalog.latency-polling-only" });
  return [
    [
      "polling-catalog-requests-per-claim.svg",
      barChart({
        title: "polling-catalog: HTTP requests per row",
        subtitle:
          "1 000 rows, agents racing on one fake ERMrest whose writes conflict like ERMrest's; fewer is better",
        unit: "requests per row",
        categories: ["5 agents", "20 agents"],
        series: [
          {
            label: `spread, ${today?.claimRows} rows per claim, ${completions}`,
            values: [spread(5, true), spread(20, true)],
          },
          { label: "previous spread, with completions", values: [spread(5, false), spread(20, false)] },
          {
            label: "?limit=1, no spread, claims only",
            values: [undefined, limit1.httpRequests / limit1.rows],
          },
        ],
        reference: { value: 3, label: "target ≤ 3" },
      }),
    ],
    [
      "polling-catalog-insert-to-claim.svg",
      barChart({
        title: "polling-catalog: from a row's insert to the agent's wake",
        subtitle: `change notices (coalescing ${notices.coalesceMs} ms) versus polling alone every ${polling.pollingMs} ms`,
        unit: "milliseconds",
        categories: ["p50", "p99", "max"],
        series: [
          { label: "AMQP change notices", values: [notices.p50Ms, notices.p99Ms, notices.maxMs] },
          { label: "polling only", values: [polling.p50Ms, polling.p99Ms, polling.maxMs] },
        ],
      }),
    ],
  ];
}

/** Every recorded figure with every field of `match`, in order. */
function all(figures, match) {
  return figures.filter((figure) => Object.entries(match).every(([key, value]) => figure[key] === value));
}

/** rmq-storage: through RabbitMQ ÷ direct at the defaults (issue #31's check), and one server against two range groups. */
function rmqStorage(figures) {
  // The newest `--figures defaults` record: its median line per size and backend, and its runs.
  const medianName = "contentAdd through RabbitMQ ÷ direct, defaults, median";
  const medians = all(figures, { name: medianName }).slice(0, 4);
  const cases = medians.map(({ backend, items }) => ({ backend, items }));
  const label = ({ backend, items }) =>
    `${backend === "sqlite" ? "SQLite" : "PostgreSQL"}, ${items.toLocaleString("en").replaceAll(",", " ")}`;
  const one = all(figures, { name: "contentAdd through RabbitMQ, one server", backend: "postgres" });
  const two = all(figures, {
    name: "contentAdd through RabbitMQ, two groups (0-7, 8-f)",
    backend: "postgres",
  });
  return [
    [
      "rmq-storage-through-vs-direct.svg",
      barChart({
        title: "rmq-storage: writes through RabbitMQ ÷ direct writes",
        subtitle: `client and server at their defaults, calls of 10 000 items, read back and verified; ${medians[0]?.runs} runs each`,
        unit: "through ÷ direct",
        categories: cases.map(label),
        series: [
          { label: "lowest run", values: medians.map((figure) => Math.min(...figure.ratios)) },
          { label: "median", values: medians.map((figure) => figure.ratio) },
          { label: "highest run", values: medians.map((figure) => Math.max(...figure.ratios)) },
        ],
        reference: { value: 0.7, label: "target ≥ 0.7" },
      }),
    ],
    [
      "rmq-storage-scale-out.svg",
      barChart({
        title: "rmq-storage: one server against two range groups",
        subtitle:
          "PostgreSQL, 1 000 000 items; both groups share the machine's 2 cores with the broker and the database",
        unit: "items per second",
        categories: one.map((_, i) => `run ${i + 1}`),
        series: [
          { label: "one server (16 ranges)", values: one.map((figure) => figure.itemsPerSecond) },
          { label: "two groups (0-7, 8-f)", values: two.map((figure) => figure.itemsPerSecond) },
        ],
      }),
    ],
  ];
}

/** supervisor: durable dispatch against the original's configuration, and READY→JOB latency over TLS. */
function supervisor(figures) {
  const single = all(figures, { name: "dequeue_finish_durable_per_s" }).slice(0, 3);
  const grouped = all(figures, { name: "dequeue_finish_durable_grouped_per_s" }).slice(0, 3);
  const tls = first(figures, { name: "tls_ready_job_p99_ms" });
  return [
    [
      "supervisor-durable-dispatch.svg",
      barChart({
        title: "supervisor: durable dispatch (DONE + next job) per second",
        subtitle:
          "file database, every commit on disk (synchronous=FULL), against the original's SQLite defaults",
        unit: "pairs per second",
        categories: single.map((_, i) => `run ${i + 1}`),
        series: [
          { label: "original's configuration", values: single.map((figure) => figure.baseline) },
          { label: "@x, one worker", values: single.map((figure) => figure.value) },
          { label: "@x, 16 workers (group commit)", values: grouped.map((figure) => figure.value) },
        ],
      }),
    ],
    [
      "supervisor-tls-latency.svg",
      barChart({
        title: "supervisor: READY→JOB round trip, 64 workers",
        subtitle: `${tls.roundTrips.toLocaleString("en")} round trips each way, the same daemon, 2 shared cores`,
        unit: "milliseconds",
        categories: ["p50", "p99", "max"],
        series: [
          { label: "Unix socket", values: [tls.baselineP50, tls.baseline, tls.baselineMax] },
          { label: "mutual TLS on loopback", values: [tls.p50, tls.value, tls.max] },
        ],
      }),
    ],
  ];
}

/** process-guard: interrupt latency now and before (at the next check), and run()'s cost against p-timeout's. */
function processGuard(figures) {
  const now = (interval) => first(figures, { name: `interrupt latency (checkIntervalMs ${interval})` });
  const before = (interval) => first(figures, { name: `interrupt latency (checkInterval ${interval})` });
  const overhead = first(figures, { name: "run() overhead" });
  return [
    [
      "process-guard-interrupt-latency.svg",
      barChart({
        title: "process-guard: from a time limit's deadline to the interrupt (p99)",
        subtitle: "a timer at the deadline (now) against a check every checkIntervalMs (before)",
        unit: "milliseconds",
        categories: ["checkIntervalMs 20", "checkIntervalMs 500"],
        series: [
          { label: "before: noticed at the next check", values: [before(20).value, before(500).value] },
          { label: "now: a timer at the deadline", values: [now(20).value, now(500).value] },
          { label: "a bare setTimeout", values: [now(20).bareTimerP99, now(500).bareTimerP99] },
        ],
        reference: { value: 5, label: "target ≤ 5 ms" },
      }),
    ],
    [
      "process-guard-run-overhead.svg",
      barChart({
        title: "process-guard: the cost of guarding one call",
        subtitle: `${overhead.calls.toLocaleString("en")} calls of an async function, against p-timeout in the same run`,
        unit: "microseconds per call",
        categories: ["overhead per call"],
        series: [
          { label: "timeGuard().run()", values: [overhead.value] },
          { label: "p-timeout", values: [overhead.pTimeoutOverhead] },
        ],
      }),
    ],
  ];
}

/** checkpoint: operations per second of checkPulse and heartbeat by cache, against the bare cache writes. */
function checkpoint(figures) {
  const caches = ["none", "memory", "sqlite"];
  const of = (bench, cache) => first(figures, { bench, cache });
  return [
    [
      "checkpoint-throughput.svg",
      barChart({
        title: "checkpoint: calls per second by cache",
        subtitle:
          "against the same cache writes made directly (or the inputs alone without a cache), same run",
        unit: "calls per second (thousands)",
        categories: caches.map((cache) => `cache: ${cache}`),
        series: [
          { label: "checkPulse", values: caches.map((cache) => of("checkPulse", cache).opsPerSec / 1000) },
          { label: "heartbeat", values: caches.map((cache) => of("heartbeat", cache).opsPerSec / 1000) },
          {
            label: "baseline (checkPulse's)",
            values: caches.map((cache) => of("checkPulse", cache).baselineOpsPerSec / 1000),
          },
        ],
      }),
    ],
  ];
}

const plotsByDoc = {
  "checkpoint.md": checkpoint,
  "process-guard.md": processGuard,
  "polling-catalog.md": pollingCatalog,
  "rmq-storage.md": rmqStorage,
  "supervisor.md": supervisor,
};

/** `[file name, svg]` for each plot, from the figures recorded in `dir`'s benchmark docs. */
export function benchmarkPictures(dir) {
  return Object.entries(plotsByDoc).flatMap(([doc, plots]) => {
    try {
      return plots(recordedFigures(join(dir, doc)));
    } catch (error) {
      throw new Error(`docs/benchmarks/${doc}: ${error.message}`);
    }
  });
}
