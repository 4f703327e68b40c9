/**
 * contentAdd of N random ids (default 1 000 000) in calls of 10 000, through RabbitMQ and directly, on SQLite
 * and PostgreSQL, in the same run; one single N-item call and its client's peak RSS (in a process of its
 * own on the built package: run `pnpm build` first); and the cmdbts2-sized relationAdd. One JSON line per
 * figure.
 *
 *   pnpm --filter @x/rmq-storage bench [--items N] [--call-size N] [--backends sqlite,postgres]
 *     [--items-per-message N] [--max-items-per-write N] [--prefetch N] [--concurrency N]
 *     [--figures rss,throughput,relations,latency]
 *
 * `--figures quorum` (not in the default set) compares classic and quorum queues on a 3-node RabbitMQ cluster
 * of its own (started and removed by the bench), in turns, into SQLite.
 *
 * `--figures metrics` (not in the default set) measures `serve --metrics`: the same calls through RabbitMQ on
 * SQLite without and with it, in turns (twice each, the faster run of each counts), while a scraper reads
 * `/metrics` every 250 ms (60 times a busy Prometheus' usual 15 s), and how long a scrape takes.
 *
 * Without `--items-per-message`, `--max-items-per-write` or `--prefetch` the client and the server run with
 * their defaults (what a user gets); every throughput line prints the values in effect.
 *
 * `--concurrency` is how many calls are in flight at a time (default 4), the same for the direct and the
 * through-RabbitMQ runs: a pipeline that writes through the broker keeps several calls going, and the
 * direct storage gets the same chance (SQLite serialises its writes anyway; PostgreSQL uses its pool).
 *
 * `--figures defaults` (not in the default set) is issue #31's check, at the package's defaults only (it
 * refuses the option flags): for each of `--sizes` (default 300 000 and 1 000 000 items) and each backend,
 * `--runs` runs (default 5) of direct writes then the same calls through RabbitMQ, each into a fresh storage
 * and read back and compared item by item; then the single 1 000 000-item `contentAdd` call's client peak RSS
 * with Node's default flags, once per run. One line per run, then one median line per size and backend
 * (`ratio`, `targetMet`: ≥ 0.7) and for the RSS (`peakRssMB`, `targetMet`: ≤ 300 MB).
 *
 * The `shaped` figure (not in the default set) is a diagnostic: direct writes cut the way the server cuts
 * them (per range, whole messages of `--items-per-message` merged up to `--max-items-per-write` items, each
 * range's storage calls one after another, the 16 ranges concurrently), i.e. the storage's ceiling for the
 * through-RabbitMQ run with the same options.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startRabbitCluster } from "@x/test-support/rabbitmq-cluster";
import { AMQP_URL, PG_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import pg from "pg";
import { DEFAULT_ITEMS_PER_MESSAGE, DEFAULT_MAX_ITEMS_PER_WRITE, defaultPrefetch } from "../src/defaults.js";
import {
  openPostgresStorage,
  openSqliteStorage,
  type ProvenanceStorage,
  RelationType,
  RmqStorageClient,
} from "../src/index.js";
import { deleteTopology } from "../test/broker.js";
import { type ServerChild, sandbox, spawnServer } from "../test/stack.js";

const { values } = parseArgs({
  options: {
    items: { type: "string", default: "1000000" },
    "call-size": { type: "string", default: "10000" },
    backends: { type: "string", default: "sqlite,postgres" },
    "items-per-message": { type: "string" }, // default: the client's default
    "max-items-per-write": { type: "string" }, // default: the server's default
    prefetch: { type: "string" }, // default: the server's default
    concurrency: { type: "string", default: "4" },
    figures: { type: "string", default: "rss,throughput,relations,latency" }, // also: shaped, scale, metrics, quorum, defaults
    runs: { type: "string", default: "5" }, // `--figures defaults`: runs per size and backend
    sizes: { type: "string", default: "300000,1000000" }, // `--figures defaults`: the item counts
  },
});
const items = Number(values.items);
const callSize = Number(values["call-size"]);
const backends = values.backends.split(",");
const itemsPerMessage = Number(values["items-per-message"] ?? DEFAULT_ITEMS_PER_MESSAGE);
const maxItemsPerWrite = Number(values["max-items-per-write"] ?? DEFAULT_MAX_ITEMS_PER_WRITE);
const prefetch = Number(values.prefetch ?? defaultPrefetch(maxItemsPerWrite));
const concurrency = Number(values.concurrency);
const figures = values.figures.split(",");
/** The options in effect, printed with every throughput figure; only those given are passed on. */
const options = { itemsPerMessage, maxItemsPerWrite, prefetch, concurrency };
const serverFlags = [
  ...(values["max-items-per-write"] ? ["--max-items-per-write", values["max-items-per-write"]] : []),
  ...(values.prefetch ? ["--prefetch", values.prefetch] : []),
];
const clientOptions = values["items-per-message"] ? { itemsPerMessage } : {};

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
/** Runs the client of the single-call RSS figure; it imports the built package (`pnpm build` first). */
const oneCallClient = fileURLToPath(new URL("./one-call-client.mjs", import.meta.url));
await requireService("RabbitMQ", AMQP_URL);
if (backends.includes("postgres")) await requireService("PostgreSQL", PG_URL);

const box = sandbox("bench");
const schemas: string[] = [];

function randomCalls(count: number, size: number): Array<Map<string, bigint>> {
  const calls: Array<Map<string, bigint>> = [];
  for (let done = 0; done < count; done += size) {
    const map = new Map<string, bigint>();
    const n = Math.min(size, count - done);
    const bytes = randomBytes(20 * n);
    for (let i = 0; i < n; i++)
      map.set(
        bytes.toString("hex", i * 20, i * 20 + 20),
        1_500_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e14)),
      );
    calls.push(map);
  }
  return calls;
}

/** Samples this process's RSS every 50 ms; when stopped, returns the peak in MB and the RSS at the start. */
function rssSampler() {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 50);
  return () => {
    clearInterval(timer);
    return { peak: mb(Math.max(peak, process.memoryUsage.rss())), before: mb(before) };
  };
}

/**
 * Reads a `serve --metrics` child's `/metrics` every `intervalMs`, one scrape at a time, pushing each
 * scrape's duration in ms to `ms`; the returned function stops it after the scrape in progress.
 */
function scrapeEvery(server: ServerChild, intervalMs: number, ms: number[]): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    await waitFor(
      () => /serving metrics host=\S+ port=\d+/.test(server.stderr()),
      30_000,
      "the metrics port",
    );
    const [, host, port] = /serving metrics host=(\S+) port=(\d+)/.exec(server.stderr()) as RegExpExecArray;
    while (!stopped) {
      const started = performance.now();
      const response = await fetch(`http://${host}:${port}/metrics`);
      if (!response.ok || !(await response.text()).includes("x_rmq_storage_queue_active"))
        throw new Error(`a scrape failed: HTTP ${response.status}`);
      ms.push(performance.now() - started);
      await sleep(intervalMs);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** Makes the calls with at most `inFlight` of them pending at a time; returns the seconds taken. */
async function timed(calls: Array<Map<string, bigint>>, storage: ProvenanceStorage, inFlight = 1) {
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < calls.length) {
      const call = calls[next++] as Map<string, bigint>;
      if (!(await storage.contentAdd(call))) throw new Error("a write resolved false");
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return (performance.now() - started) / 1_000;
}

/**
 * The storage calls the server makes for `calls`: per range (first hex digit) the items cut into messages
 * of `itemsPerMessage`, whole messages merged up to `maxItemsPerWrite` items; only messages of the same
 * `concurrency` consecutive calls are merged (a queue holds at most the messages of the calls in flight).
 */
function serverShaped(calls: Array<Map<string, bigint>>): Array<Array<Map<string, bigint>>> {
  const lanes = new Map<string, Array<Map<string, bigint>>>();
  const sealed = new Map<string, number>();
  for (const [index, call] of calls.entries()) {
    if (index % concurrency === 0) for (const [range, lane] of lanes) sealed.set(range, lane.length);
    const byRange = new Map<string, Array<[string, bigint]>>();
    for (const entry of call) {
      const range = entry[0][0] as string;
      const list = byRange.get(range);
      if (list === undefined) byRange.set(range, [entry]);
      else list.push(entry);
    }
    for (const [range, entries] of byRange) {
      const lane = lanes.get(range) ?? [];
      lanes.set(range, lane);
      for (let i = 0; i < entries.length; i += itemsPerMessage) {
        const message = entries.slice(i, i + itemsPerMessage);
        const last = lane.length > (sealed.get(range) ?? 0) ? lane.at(-1) : undefined;
        if (last !== undefined && last.size + message.length <= maxItemsPerWrite)
          for (const [id, date] of message) last.set(id, date);
        else lane.push(new Map(message));
      }
    }
  }
  return [...lanes.values()];
}

/** Makes each lane's calls one after another, all lanes at once; returns the seconds taken. */
async function timedLanes(lanes: Array<Array<Map<string, bigint>>>, storage: ProvenanceStorage) {
  const started = performance.now();
  await Promise.all(
    lanes.map(async (lane) => {
      for (const call of lane)
        if (!(await storage.contentAdd(call))) throw new Error("a write resolved false");
    }),
  );
  return (performance.now() - started) / 1_000;
}

/**
 * Runs the client of the single-call RSS figure in a process of its own (on the built package), with
 * `nodeOptions` added to NODE_OPTIONS, against a server already serving `prefix`; returns its JSON line.
 */
async function oneCallRss(prefix: string, spec: string, nodeOptions: string, count = items) {
  const child = spawn(
    process.execPath,
    [
      oneCallClient,
      AMQP_URL,
      prefix,
      spec.slice("sqlite:".length),
      String(count),
      ...(values["items-per-message"] ? [values["items-per-message"]] : []),
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} ${nodeOptions}`.trim() },
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`the one-call client exited ${code}`);
  return JSON.parse(output) as Record<string, number | boolean | Record<string, number>>;
}

/** Reads every item of `calls` back from `storage` and throws unless each one is stored with its date. */
async function verify(calls: Array<Map<string, bigint>>, storage: ProvenanceStorage, what: string) {
  let checked = 0;
  for (const call of calls) {
    const stored = await storage.contentGet(call.keys());
    for (const [id, date] of call) {
      if (stored.get(id) !== date)
        throw new Error(`${what}: ${id} read back as ${stored.get(id)}, written as ${date}`);
      checked++;
    }
    if (stored.size !== call.size) throw new Error(`${what}: read back ${stored.size} of ${call.size} items`);
  }
  return checked;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

interface Backend {
  name: string;
  /** A fresh, empty storage, and its spec string for the server. */
  fresh(): Promise<{ storage: ProvenanceStorage; spec: string }>;
}

const sqlite: Backend = {
  name: "sqlite",
  async fresh() {
    const file = box.file();
    return { storage: await openSqliteStorage(file), spec: `sqlite:${file}` };
  },
};
const postgres: Backend = {
  name: "postgres",
  async fresh() {
    const schema = uniqueName("bench");
    schemas.push(schema);
    const storage = await openPostgresStorage(PG_URL, { schema });
    const url = new URL(PG_URL);
    url.searchParams.set("schema", schema);
    return { storage, spec: url.toString() };
  },
};

const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

/** The `seconds` and `itemsPerSecond` fields of a throughput line. */
const throughput = (items: number, seconds: number) => ({
  seconds: +seconds.toFixed(2),
  itemsPerSecond: Math.round(items / seconds),
});

/**
 * Runs `body` with a client on a fresh topology served by `x-rmq-storage serve` processes, one per entry
 * of `groups` (each entry: that process's extra flags, such as `--ranges 0-7`).
 */
async function throughBroker<T>(
  spec: string,
  body: (client: RmqStorageClient, local: ProvenanceStorage, servers: ServerChild[]) => Promise<T>,
  groups: string[][] = [[]],
  url = AMQP_URL,
) {
  const prefix = box.prefix();
  const servers = await Promise.all(
    groups.map((flags) =>
      spawnServer([
        "--amqp",
        url,
        "--storage",
        spec,
        "--prefix",
        prefix,
        "--log-level",
        "info",
        ...serverFlags,
        ...flags,
      ]),
    ),
  );
  const local = spec.startsWith("sqlite:")
    ? await openSqliteStorage(spec.slice(7))
    : await openSqliteStorage(":memory:");
  const client = await RmqStorageClient.connect({ url, storage: local, prefix, ...clientOptions });
  try {
    return await body(client, local, servers);
  } finally {
    await client.close();
    await local.close();
    for (const server of servers) server.child.kill("SIGTERM");
    await Promise.all(servers.map((server) => once(server.child, "exit")));
    // A broker of the bench's own (a cluster) goes away with its queues.
    if (url === AMQP_URL) await deleteTopology(prefix);
  }
}

try {
  if (figures.includes("rss")) {
    // One single call of all the items: the client's RSS must stay under 300 MB. The client runs in a
    // process of its own on the built package, as an application would (this one carries tsx and the
    // other figures' modules).
    if (!existsSync(fileURLToPath(new URL("../dist/index.js", import.meta.url))))
      throw new Error("the single-call RSS figure runs the built package: run `pnpm build` first");
    const target = await sqlite.fresh();
    await target.storage.close();
    const prefix = box.prefix();
    const server = await spawnServer(["--amqp", AMQP_URL, "--storage", target.spec, "--prefix", prefix]);
    try {
      // Twice: with Node's default young generation (which on a machine with much memory lets about
      // 100 MB of the encoded messages' garbage wait for a collection), and with the README's
      // `--max-semi-space-size=16` for writers whose RSS must stay tight.
      for (const nodeOptions of ["", "--max-semi-space-size=16"]) {
        const run = await oneCallRss(prefix, target.spec, nodeOptions);
        if (run.ok !== true) throw new Error("the single call resolved false");
        print({
          name: "contentAdd one call through RabbitMQ",
          backend: "sqlite",
          items,
          nodeOptions,
          ...throughput(items, run.seconds as number),
          peakRssMB: run.peakRssMB,
          rssBeforeCallMB: run.beforeCallRssMB,
          clientOverheadMB: (run.peakRssMB as number) - (run.beforeCallRssMB as number),
          baselineRssMB: run.emptyRssMB,
          baselineName: "the same process before the client and the caller's Map exist",
          beforeCall: run.beforeCall,
          atPeak: run.atPeak,
          targetRssMB: 300,
          itemsPerMessage,
        });
      }
    } finally {
      server.child.kill("SIGTERM");
      await once(server.child, "exit");
      await deleteTopology(prefix);
    }
  }

  for (const backend of [sqlite, postgres].filter(
    (b) => (figures.includes("throughput") || figures.includes("shaped")) && backends.includes(b.name),
  )) {
    const calls = randomCalls(items, callSize);
    const direct = await backend.fresh();
    const directSeconds = await timed(calls, direct.storage, concurrency);
    await direct.storage.close();
    const directRate = items / directSeconds;
    print({
      name: "contentAdd direct",
      backend: backend.name,
      items,
      callSize,
      ...throughput(items, directSeconds),
      ratio: 1,
      concurrency,
    });
    if (figures.includes("shaped")) {
      const lanes = serverShaped(calls);
      const shaped = await backend.fresh();
      const shapedSeconds = await timedLanes(lanes, shaped.storage);
      await shaped.storage.close();
      print({
        name: "contentAdd direct, server-shaped",
        backend: backend.name,
        items,
        storageCalls: lanes.reduce((sum, lane) => sum + lane.length, 0),
        lanes: lanes.length,
        ...throughput(items, shapedSeconds),
        baseline: "contentAdd direct",
        ratio: +(items / shapedSeconds / directRate).toFixed(3),
        ...options,
      });
    }
    if (!figures.includes("throughput")) continue;
    const target = await backend.fresh();
    await target.storage.close();
    const { seconds, peak } = await throughBroker(target.spec, async (client) => {
      const sample = rssSampler();
      const s = await timed(calls, client, concurrency);
      return { seconds: s, peak: sample().peak };
    });
    print({
      name: "contentAdd through RabbitMQ",
      backend: backend.name,
      items,
      callSize,
      ...throughput(items, seconds),
      baseline: "contentAdd direct",
      ratio: +(items / seconds / directRate).toFixed(3),
      target: 0.7,
      peakRssMB: peak,
      ...options,
    });
  }

  if (figures.includes("defaults")) {
    // Issue #31: the defaults, as a user runs them from the README; direct and through RabbitMQ in the same
    // run, each into a fresh storage, read back and verified; then the 1 000 000-item client's peak RSS.
    if (values["items-per-message"] || values["max-items-per-write"] || values.prefetch)
      throw new Error("--figures defaults measures the defaults: drop the option flags");
    if (!existsSync(fileURLToPath(new URL("../dist/index.js", import.meta.url))))
      throw new Error("the single-call RSS figure runs the built package: run `pnpm build` first");
    const runs = Number(values.runs);
    const sizes = values.sizes.split(",").map(Number);
    const ratios = new Map<string, number[]>();
    const peaks: number[] = [];
    for (let run = 1; run <= runs; run++) {
      for (const size of sizes)
        for (const backend of [sqlite, postgres].filter((b) => backends.includes(b.name))) {
          const calls = randomCalls(size, callSize);
          const direct = await backend.fresh();
          const directSeconds = await timed(calls, direct.storage, concurrency);
          await verify(calls, direct.storage, "direct");
          await direct.storage.close();
          const target = await backend.fresh();
          const { seconds, peak } = await throughBroker(target.spec, async (client) => {
            const sample = rssSampler();
            const s = await timed(calls, client, concurrency);
            return { seconds: s, peak: sample().peak };
          });
          const verified = await verify(calls, target.storage, "through RabbitMQ");
          await target.storage.close();
          const ratio = directSeconds / seconds;
          const key = `${backend.name} ${size}`;
          ratios.set(key, [...(ratios.get(key) ?? []), ratio]);
          print({
            name: "contentAdd through RabbitMQ ÷ direct, defaults",
            run,
            backend: backend.name,
            items: size,
            callSize,
            concurrency,
            directSeconds: +directSeconds.toFixed(2),
            seconds: +seconds.toFixed(2),
            itemsPerSecond: Math.round(size / seconds),
            ratio: +ratio.toFixed(3),
            verified,
            benchPeakRssMB: peak,
          });
        }
      const target = await sqlite.fresh();
      await target.storage.close();
      const prefix = box.prefix();
      const server = await spawnServer(["--amqp", AMQP_URL, "--storage", target.spec, "--prefix", prefix]);
      try {
        const one = await oneCallRss(prefix, target.spec, "", 1_000_000);
        if (one.ok !== true) throw new Error("the single call resolved false");
        peaks.push(one.peakRssMB as number);
        print({
          name: "contentAdd one call through RabbitMQ, client RSS, Node's default flags",
          run,
          backend: "sqlite",
          items: 1_000_000,
          seconds: +(one.seconds as number).toFixed(2),
          peakRssMB: one.peakRssMB,
          rssBeforeCallMB: one.beforeCallRssMB,
          baselineRssMB: one.emptyRssMB,
          beforeCall: one.beforeCall,
          atPeak: one.atPeak,
        });
      } finally {
        server.child.kill("SIGTERM");
        await once(server.child, "exit");
        await deleteTopology(prefix);
      }
    }
    for (const [key, list] of ratios) {
      const [backend, size] = key.split(" ");
      const ratio = median(list);
      print({
        name: "contentAdd through RabbitMQ ÷ direct, defaults, median",
        backend,
        items: Number(size),
        runs: list.length,
        ratios: list.map((r) => +r.toFixed(3)),
        ratio: +ratio.toFixed(3),
        target: 0.7,
        targetMet: ratio >= 0.7,
        ...options,
      });
    }
    const peak = median(peaks);
    print({
      name: "contentAdd one call through RabbitMQ, client RSS, Node's default flags, median",
      items: 1_000_000,
      runs: peaks.length,
      peaksMB: peaks,
      peakRssMB: peak,
      targetRssMB: 300,
      targetMet: peak <= 300,
      nodeVersion: process.version,
    });
  }

  if (figures.includes("scale")) {
    // Scale-out on PostgreSQL: the same calls through one server (all 16 ranges), then through two server
    // groups with disjoint ranges (0-7 and 8-f, two processes on this machine standing in for two hosts),
    // each into a fresh schema, with direct writes of the same calls as the baseline.
    const calls = randomCalls(items, callSize);
    const direct = await postgres.fresh();
    const directSeconds = await timed(calls, direct.storage, concurrency);
    await direct.storage.close();
    print({
      name: "contentAdd direct",
      backend: "postgres",
      items,
      callSize,
      ...throughput(items, directSeconds),
      ratio: 1,
      concurrency,
    });
    for (const [layout, groups] of [
      ["one server", [[]]],
      [
        "two groups (0-7, 8-f)",
        [
          ["--ranges", "0-7"],
          ["--ranges", "8-f"],
        ],
      ],
    ] as const) {
      const target = await postgres.fresh();
      await target.storage.close();
      const seconds = await throughBroker(
        target.spec,
        (client) => timed(calls, client, concurrency),
        groups.map((flags) => [...flags]),
      );
      print({
        name: `contentAdd through RabbitMQ, ${layout}`,
        backend: "postgres",
        items,
        callSize,
        ...throughput(items, seconds),
        baseline: "contentAdd direct",
        ratio: +(directSeconds / seconds).toFixed(3),
        servers: groups.length,
        ...options,
      });
    }
  }

  if (figures.includes("latency")) {
    // Small writes keep their latency: one 1-item contentAdd round trip, one call at a time (the server's
    // and the client's default options).
    const target = await sqlite.fresh();
    await target.storage.close();
    const rounds = 300;
    const samples = await throughBroker(target.spec, async (client) => {
      const ms: number[] = [];
      for (let i = 0; i < rounds + 30; i++) {
        const call = randomCalls(1, 1)[0] as Map<string, bigint>;
        const started = performance.now();
        if (!(await client.contentAdd(call))) throw new Error("a write resolved false");
        if (i >= 30) ms.push(performance.now() - started); // the first 30 warm up
      }
      return ms.sort((a, b) => a - b);
    });
    const at = (q: number) => +(samples[Math.floor(q * (samples.length - 1))] as number).toFixed(2);
    print({
      name: "contentAdd 1 item round trip through RabbitMQ",
      backend: "sqlite",
      calls: rounds,
      medianMs: at(0.5),
      p90Ms: at(0.9),
      p99Ms: at(0.99),
    });
  }

  if (figures.includes("metrics")) {
    const calls = randomCalls(items, callSize);
    const seconds: Record<"without" | "with", number[]> = { without: [], with: [] };
    const scrapeMs: number[] = [];
    for (const turn of ["without", "with", "without", "with"] as const) {
      const target = await sqlite.fresh();
      await target.storage.close();
      const flags = turn === "with" ? ["--metrics", "0"] : [];
      seconds[turn].push(
        await throughBroker(
          target.spec,
          async (client, _local, [server]) => {
            const stop = turn === "with" ? scrapeEvery(server as ServerChild, 250, scrapeMs) : async () => {};
            try {
              return await timed(calls, client, concurrency);
            } finally {
              await stop();
            }
          },
          [flags],
        ),
      );
    }
    const [without, withMetrics] = [Math.min(...seconds.without), Math.min(...seconds.with)];
    const sorted = scrapeMs.sort((a, b) => a - b);
    const at = (q: number) => +(sorted[Math.floor(q * (sorted.length - 1))] as number).toFixed(1);
    print({
      name: "contentAdd through RabbitMQ with serve --metrics, scraped every 250 ms",
      backend: "sqlite",
      items,
      callSize,
      ...throughput(items, withMetrics),
      baseline: "the same without --metrics",
      baselineSeconds: +without.toFixed(2),
      ratio: +(without / withMetrics).toFixed(3),
      runs: {
        without: seconds.without.map((s) => +s.toFixed(2)),
        with: seconds.with.map((s) => +s.toFixed(2)),
      },
      scrapes: sorted.length,
      scrapeP50Ms: at(0.5),
      scrapeP99Ms: at(0.99),
      ...options,
    });
  }

  if (figures.includes("quorum")) {
    // Classic against quorum queues, in turns (classic, quorum, classic, quorum), on a 3-node cluster of the
    // bench's own (the shared broker keeps its file handles: 165 quorum queues hold hundreds), into SQLite;
    // the server and the client on the first node, the queues replicated on all three.
    const cluster = await startRabbitCluster({ tag: "xb" });
    try {
      const calls = randomCalls(items, callSize);
      const best = new Map<string, number>();
      for (const type of ["classic", "quorum", "classic", "quorum"]) {
        const target = await sqlite.fresh();
        await target.storage.close();
        const seconds = await throughBroker(
          target.spec,
          (client) => timed(calls, client, concurrency),
          [["--queue-type", type]],
          cluster.urls[0],
        );
        best.set(type, Math.min(best.get(type) ?? Number.POSITIVE_INFINITY, seconds));
        print({
          name: `contentAdd through RabbitMQ, ${type} queues, 3-node cluster`,
          backend: "sqlite",
          items,
          callSize,
          ...throughput(items, seconds),
          ...options,
        });
      }
      print({
        name: "quorum ÷ classic queues, the faster of two runs each",
        backend: "sqlite",
        items,
        ratio: +((best.get("classic") as number) / (best.get("quorum") as number)).toFixed(3),
      });
    } finally {
      await cluster.close();
    }
  }

  if (figures.includes("relations")) {
    // cmdbts2-sized relations: 38/87/14/14/13 rows, one call each, one after the other.
    const relation = await sqlite.fresh();
    await relation.storage.close();
    const id = () => randomBytes(20).toString("hex");
    const sizes: Array<[RelationType, number]> = [
      [RelationType.CNT_EARLY_IN_REV, 38],
      [RelationType.CNT_IN_DIR, 87],
      [RelationType.DIR_IN_REV, 14],
      [RelationType.REV_IN_ORG, 14],
      [RelationType.REV_BEFORE_REV, 13],
    ];
    const data = sizes.map(([rel, rows]) => {
      const withPath = rel !== RelationType.REV_IN_ORG && rel !== RelationType.REV_BEFORE_REV;
      return [
        rel,
        new Map(
          Array.from({ length: rows }, (_, i) => [
            id(),
            [{ dst: id(), path: withPath ? Buffer.from(`dir/file${i}`) : null }],
          ]),
        ),
      ] as const;
    });
    const relSeconds = await throughBroker(relation.spec, async (client) => {
      const started = performance.now();
      for (const [rel, map] of data)
        if (!(await client.relationAdd(rel, map))) throw new Error("relationAdd resolved false");
      return (performance.now() - started) / 1_000;
    });
    print({
      name: "relationAdd cmdbts2-sized through RabbitMQ",
      backend: "sqlite",
      items: 166,
      seconds: +relSeconds.toFixed(3),
      itemsPerSecond: Math.round(166 / relSeconds),
      targetSeconds: 1,
    });
  }
} finally {
  await box.cleanup();
  if (schemas.length > 0) {
    const client = new pg.Client(PG_URL);
    await client.connect();
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}
