/**
 * Benchmarks of @x/supervisor (see docs/benchmarks/supervisor.md). Prints one JSON line per figure, each with
 * a baseline measured in the same run. File databases in WAL mode throughout, as in production.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { hash } from "node:crypto";
import {
  copyFileSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import {
  readQueueStatus,
  SupervisorClient,
  SupervisorStorage,
  startSupervisor,
  type TlsEndpoint,
} from "../src/index.js";
import { migrations } from "../src/schema.js";
import { makeCa, makeCertificate } from "../test/certificates.js";
import { originalStatements } from "../test/original-statements.js";
import { timeRoundTrips } from "./round-trips.js";

const root = mkdtempSync(join(tmpdir(), "x-supervisor-bench-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

function emit(figure: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(figure)}\n`);
}

const line = (i: number, width: number): [string, string] => [
  `pkg${String(i).padStart(width, "0")}`,
  `1.${i} 1.${i + 1}`,
];

function freshStorage(name: string): SupervisorStorage {
  const storage = SupervisorStorage.open(join(root, name));
  storage.upgrade();
  return storage;
}

/** Raw better-sqlite3: the same rows, one prepared INSERT per row, one transaction. */
function rawInsert(storage: SupervisorStorage, entries: Array<[string, string]>): void {
  const db = storage.db;
  db.prepare("INSERT INTO fetchers (name) VALUES ('f1')").run();
  db.prepare("INSERT INTO fetcher_runs (fetcher_id, run_started, is_complete) VALUES (1, 100, 0)").run();
  const insert = db.prepare(
    "INSERT INTO queue (fetcher_id, fetcher_run_started, attr_path, payload, order_jitter) VALUES (1, 100, ?, ?, ?)",
  );
  db.transaction(() => {
    for (const [attrPath, payload] of entries) {
      insert.run(attrPath, payload, hash("md5", attrPath, "buffer").readInt32LE(0));
    }
  })();
}

function enqueueAndDequeue(): void {
  const entries = Array.from({ length: 100_000 }, (_, i) => line(i, 6));

  const raw = freshStorage("raw.db");
  let start = performance.now();
  rawInsert(raw, entries);
  const rawRate = entries.length / ((performance.now() - start) / 1000);

  const ours = freshStorage("ours.db");
  start = performance.now();
  ours.upsertFetcherRun("f1", 100, false);
  ours.enqueue("f1", 100, entries);
  const rate = entries.length / ((performance.now() - start) / 1000);
  emit({
    name: "enqueue_lines_per_s",
    value: Math.round(rate),
    unit: "lines/s",
    lines: entries.length,
    baseline: Math.round(rawRate),
    baselineName: "raw better-sqlite3 prepared INSERT per row, one transaction",
    ratio: round(rate / rawRate),
    target: ">= 100000",
  });

  // The original's statements issued by hand with raw better-sqlite3, on the raw database.
  const original = originalStatements(raw.db);
  // Flush both databases first (checkpoint, fsync), so that neither loop pays for the other's writeback.
  for (const storage of [raw, ours]) storage.db.pragma("wal_checkpoint(TRUNCATE)");
  // Alternate the two in rounds, each going first in half of them, so that changes of machine load and
  // checkpoint timing hit both alike.
  const iterations = 2_000;
  const rounds = 8;
  const perRound = iterations / rounds;
  const timeRaw = (first: number) => {
    const t0 = performance.now();
    for (let now = first; now < first + perRound; now++) {
      original.finish(original.dequeue.immediate(now)!.attrPath, now, 0);
    }
    return performance.now() - t0;
  };
  const timeOurs = (first: number) => {
    const t0 = performance.now();
    for (let now = first; now < first + perRound; now++) ours.finish(ours.dequeue(now)!.attrPath, now, 0);
    return performance.now() - t0;
  };
  let rawMs = 0;
  let oursMs = 0;
  for (let round = 0; round < rounds; round++) {
    const first = 1_000 + round * perRound;
    if (round % 2 === 0) {
      rawMs += timeRaw(first);
      oursMs += timeOurs(first);
    } else {
      oursMs += timeOurs(first);
      rawMs += timeRaw(first);
    }
  }
  const rawPairs = iterations / (rawMs / 1000);
  const pairs = iterations / (oursMs / 1000);
  emit({
    name: "dequeue_finish_per_s",
    value: Math.round(pairs),
    unit: "pairs/s",
    queued: entries.length,
    iterations,
    baseline: Math.round(rawPairs),
    baselineName: "the original's SQL issued by hand with raw better-sqlite3",
    ratio: round(pairs / rawPairs),
    target: ">= 5000",
  });
  raw.close();
  ours.close();
}

/**
 * Enqueue against the original's own: its `upsert_fetcher_run` and `enqueue` statements (one insert per line,
 * each looking its fetcher up by name) on a fresh database opened as the original opens it (rollback journal
 * `DELETE`, `synchronous = FULL`), against `upsertFetcherRun` + `enqueue` on a fresh database opened by
 * `SupervisorStorage.open` (WAL, `synchronous = FULL`): both durable on return. Alternating rounds, each going
 * first in half of them.
 */
function enqueueAgainstOriginal(): void {
  const entries = Array.from({ length: 100_000 }, (_, i) => line(i, 6));
  const rounds = 4;
  let originalMs = 0;
  let oursMs = 0;
  // CPU time of this process (user + system) on each side: what the machine's other work does not stretch
  let originalCpuMs = 0;
  let oursCpuMs = 0;
  const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;
  const timeOriginal = (round: number) => {
    const db = new Database(join(root, `enqueue-original-${round}.db`));
    db.pragma("foreign_keys = ON");
    db.transaction(() => {
      for (const step of migrations) db.exec(step);
      db.pragma(`user_version = ${migrations.length}`);
    })();
    const original = originalStatements(db);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    original.upsertFetcherRun("f1", 100, false);
    original.enqueue("f1", 100, entries);
    originalMs += performance.now() - t0;
    originalCpuMs += cpuMs(process.cpuUsage(c0));
    db.close();
  };
  const timeOurs = (round: number) => {
    const ours = freshStorage(`enqueue-ours-${round}.db`);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    ours.upsertFetcherRun("f1", 100, false);
    ours.enqueue("f1", 100, entries);
    oursMs += performance.now() - t0;
    oursCpuMs += cpuMs(process.cpuUsage(c0));
    ours.close();
  };
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      timeOriginal(round);
      timeOurs(round);
    } else {
      timeOurs(round);
      timeOriginal(round);
    }
  }
  const rate = (rounds * entries.length) / (oursMs / 1000);
  const originalRate = (rounds * entries.length) / (originalMs / 1000);
  emit({
    name: "enqueue_vs_original_lines_per_s",
    value: Math.round(rate),
    unit: "lines/s",
    lines: entries.length,
    rounds,
    config: "WAL, synchronous=FULL",
    baseline: Math.round(originalRate),
    baselineName:
      "the original's upsert_fetcher_run and enqueue statements (one insert per line), journal_mode=delete, synchronous=FULL",
    ratio: round(rate / originalRate),
    cpuMs: Math.round(oursCpuMs),
    baselineCpuMs: Math.round(originalCpuMs),
    cpuRatio: round(originalCpuMs / oursCpuMs),
    target: "ratio >= 2",
  });
}

/**
 * A database in `root` with `queued` lines of one fetcher run queued, left in SQLite's default rollback journal
 * (`DELETE`) as the original uses it.
 */
function originalConfigDatabase(name: string, queued: number): void {
  const source = freshStorage(name);
  source.upsertFetcherRun("f1", 100, false);
  source.enqueue(
    "f1",
    100,
    Array.from({ length: queued }, (_, i) => line(i, 6)),
  );
  source.db.pragma("wal_checkpoint(TRUNCATE)");
  source.db.pragma("journal_mode = DELETE");
  source.close();
}

/**
 * Durable dispatch, side by side with the original's configuration: a copy of one database with 100 000 rows
 * queued opened as the original opens it (SQLite's defaults: rollback journal `DELETE`, `synchronous = FULL`;
 * `foreign_keys = ON`), running its `finish` (autocommit) and its `dequeue` (one transaction) per `DONE`, and
 * another copy opened by `SupervisorStorage.open` (WAL, `synchronous = FULL`) running the daemon's
 * `dispatch`: one request per transaction (one worker), then groups of 16 (16 workers asking at once).
 */
function durableDispatch(): void {
  originalConfigDatabase("durable-source.db", 100_000);
  for (const name of ["durable-original.db", "durable-ours.db", "durable-grouped.db"]) {
    copyFileSync(join(root, "durable-source.db"), join(root, name));
  }
  const originalDb = new Database(join(root, "durable-original.db"));
  originalDb.pragma("foreign_keys = ON");
  const settings = {
    journal: originalDb.pragma("journal_mode", { simple: true }),
    synchronous: originalDb.pragma("synchronous", { simple: true }),
  };
  const original = originalStatements(originalDb);
  const ours = SupervisorStorage.open(join(root, "durable-ours.db"));
  const grouped = SupervisorStorage.open(join(root, "durable-grouped.db"));
  const iterations = 1_024;
  const rounds = 8;
  const perRound = iterations / rounds;
  const group = 16;
  const timeOriginal = (first: number) => {
    const t0 = performance.now();
    let attr: string | undefined;
    for (let now = first; now < first + perRound; now++) {
      if (attr !== undefined) original.finish(attr, now, 0);
      attr = original.dequeue(now)?.attrPath;
    }
    if (attr !== undefined) original.finish(attr, first + perRound, 0);
    return performance.now() - t0;
  };
  const timeOurs = (first: number) => {
    const t0 = performance.now();
    let attr: string | undefined;
    for (let now = first; now < first + perRound; now++) {
      const [job] = ours.dispatch([{ now, ...(attr ? { finished: { attrPath: attr, exitCode: 0 } } : {}) }]);
      attr = job?.attrPath;
    }
    if (attr !== undefined) ours.finish(attr, first + perRound, 0);
    return performance.now() - t0;
  };
  const timeGrouped = (first: number) => {
    const t0 = performance.now();
    let held: string[] = [];
    for (let now = first; now < first + perRound; now += group) {
      const requests = Array.from({ length: group }, (_, i) => ({
        now,
        ...(held[i] ? { finished: { attrPath: held[i]!, exitCode: 0 } } : {}),
      }));
      held = grouped.dispatch(requests).map((job) => job?.attrPath ?? "");
    }
    for (const attr of held) if (attr) grouped.finish(attr, first + perRound, 0);
    return performance.now() - t0;
  };
  let originalMs = 0;
  let oursMs = 0;
  let groupedMs = 0;
  for (let round = 0; round < rounds; round++) {
    const first = 1_000 + round * perRound;
    const order = round % 2 === 0 ? [0, 1, 2] : [2, 1, 0];
    for (const which of order) {
      if (which === 0) originalMs += timeOriginal(first);
      else if (which === 1) oursMs += timeOurs(first);
      else groupedMs += timeGrouped(first);
    }
  }
  const originalPairs = iterations / (originalMs / 1000);
  const baseline = {
    baseline: Math.round(originalPairs),
    baselineName: `the original's configuration: journal_mode=${String(settings.journal)}, synchronous=${String(settings.synchronous)} (FULL), its finish and dequeue, one transaction each per DONE`,
  };
  emit({
    name: "dequeue_finish_durable_per_s",
    value: Math.round(iterations / (oursMs / 1000)),
    unit: "pairs/s",
    queued: 100_000,
    iterations,
    workers: 1,
    config: "WAL, synchronous=FULL, one dispatch (DONE + next job) per transaction",
    ...baseline,
    ratio: round(iterations / (oursMs / 1000) / originalPairs),
    target: "reported",
  });
  emit({
    name: "dequeue_finish_durable_grouped_per_s",
    value: Math.round(iterations / (groupedMs / 1000)),
    unit: "pairs/s",
    queued: 100_000,
    iterations,
    workers: group,
    config: `WAL, synchronous=FULL, group commits of ${group} requests (DONE + next job each)`,
    ...baseline,
    ratio: round(iterations / (groupedMs / 1000) / originalPairs),
    target: "ratio >= 10",
  });
  originalDb.close();
  ours.close();
  grouped.close();
}

const daemonScript = fileURLToPath(new URL("./daemon-process.ts", import.meta.url));

/**
 * Starts bench/daemon-process.ts and returns it with a reader of its JSON lines; `tlsFiles` (certificate, key,
 * CA) also turns its TLS listener on.
 */
function startDaemon(dir: string, tlsFiles: string[] = []) {
  mkdirSync(join(dir, "fetchers"), { recursive: true });
  const child = spawn(
    process.execPath,
    [
      "--conditions=@x/source",
      "--expose-gc",
      "--import",
      "tsx",
      daemonScript,
      join(dir, "state.db"),
      join(dir, "fetchers"),
      join(dir, "s.sock"),
      ...tlsFiles,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const messages: Array<Record<string, number | string>> = [];
  const waiters: Array<() => void> = [];
  let buffer = "";
  child.stdout!.setEncoding("utf8").on("data", (text: string) => {
    buffer += text;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      messages.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
      for (const wake of waiters.splice(0)) wake();
    }
  });
  const next = async (event: string) => {
    for (;;) {
      const found = messages.find((m) => m.event === event);
      if (found) {
        messages.splice(messages.indexOf(found), 1);
        return found;
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { child, next, socket: join(dir, "s.sock"), fetchers: join(dir, "fetchers") };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

async function writeFetcherFile(path: string, count: number, width: number): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < count; i += 10_000) {
    let chunk = "";
    for (let j = i; j < Math.min(count, i + 10_000); j++) chunk += `${line(j, width).join(" ")}\n`;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
}

/**
 * `workers` connections looping DONE→JOB (READY first); latency from write to complete reply, per round trip.
 * `socket` is a Unix socket path or a TLS endpoint.
 */
async function roundTrips(socket: string | TlsEndpoint, total: number, workers = 16): Promise<number[]> {
  const perWorker = Math.ceil(total / workers);
  // every worker connects (and, over TLS, shakes hands) before any starts its loop
  const clients = await Promise.all(Array.from({ length: workers }, () => SupervisorClient.connect(socket)));
  return timeRoundTrips(clients, perWorker);
}

/** Starts a bench script in its own process and waits for its first line, `{"event":"ready",…}`. */
async function startReady(script: string, args: string[]) {
  const child = spawn(process.execPath, ["--conditions=@x/source", "--import", "tsx", script, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const text = await new Promise<string>((resolve) =>
    child.stdout!.setEncoding("utf8").once("data", (chunk: string) => resolve(chunk)),
  );
  return { child, ready: JSON.parse(text.split("\n")[0]!) as { port: number | null } };
}

const rawServerScript = fileURLToPath(new URL("./raw-server-process.ts", import.meta.url));
const originalDaemonScript = fileURLToPath(new URL("./original-daemon-process.ts", import.meta.url));
const clientScript = fileURLToPath(new URL("./client-process.ts", import.meta.url));

/**
 * As {@link roundTrips}, with the workers spread over `processes` client processes (real workers are
 * processes of their own, often on other machines): all connect first, then all loop at once. Returns the
 * latencies and the longest time a process took from the start of the loops to its last reply.
 */
async function roundTripsFromProcesses(
  target: string | TlsEndpoint,
  total: number,
  workers: number,
  processes: number,
): Promise<{ ms: number[]; elapsedMs: number }> {
  const children = Array.from({ length: processes }, () => {
    const child = spawn(
      process.execPath,
      [
        "--conditions=@x/source",
        "--import",
        "tsx",
        clientScript,
        JSON.stringify(target),
        String(workers / processes),
        String(total / processes),
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    let buffer = "";
    const lines: Array<Record<string, unknown>> = [];
    let wake = () => {};
    child.stdout!.setEncoding("utf8").on("data", (text: string) => {
      buffer += text;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        lines.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
        wake();
      }
    });
    const next = async () => {
      while (lines.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return lines.shift()!;
    };
    return { child, next };
  });
  for (const { next } of children) await next(); // connected
  for (const { child } of children) child.stdin!.write("go\n");
  const all: number[] = [];
  let elapsedMs = 0;
  for (const { next } of children) {
    const result = await next();
    all.push(...(result.ms as number[]));
    elapsedMs = Math.max(elapsedMs, result.elapsedMs as number);
  }
  return { ms: all, elapsedMs };
}

/** The socket floor: a raw server answering every line at once with a fixed JOB reply, same client loop. */
async function rawServerRoundTrips(total: number): Promise<number[]> {
  const socket = join(root, "raw.sock");
  const server = createServer((conn) => {
    conn.on("data", (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1))
        conn.write("JOB pkg000001 1.1 1.2\n");
    });
    conn.on("end", () => conn.end());
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  // the server runs in this process here, so the floor is pessimistic rather than optimistic
  const latencies = await roundTrips(socket, total);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return latencies;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** What a round-trip latency figure prints besides its p99s and p50s. */
interface LatencyFigure {
  /** What was measured (workers, rows queued, …), printed after the figure's round-trip count. */
  run: Record<string, unknown>;
  baselineName: string;
  target: string;
  /** The largest samples to print too: the figure's, or the figure's and the baseline's (with its count). */
  max?: "own" | "both";
}

/**
 * Emits a round-trip latency figure: the p99 of `own` (sorted, in ms) against the p99 of `baseline` (sorted, in
 * ms), with both p50s and the ratio of the p99s.
 */
function emitLatency(name: string, own: number[], baseline: number[], figure: LatencyFigure): void {
  const both = figure.max === "both";
  emit({
    name,
    value: round(percentile(own, 99)),
    unit: "ms",
    p50: round(percentile(own, 50)),
    ...(figure.max ? { max: round(own.at(-1)!) } : {}),
    roundTrips: own.length,
    ...figure.run,
    baseline: round(percentile(baseline, 99)),
    baselineP50: round(percentile(baseline, 50)),
    ...(both ? { baselineMax: round(baseline.at(-1)!), baselineRoundTrips: baseline.length } : {}),
    baselineName: figure.baselineName,
    ratio: round(percentile(own, 99) / percentile(baseline, 99)),
    target: figure.target,
  });
}

/**
 * A daemon (bench/daemon-process.ts) in `root/<name>` with `queued` lines of one fetcher file ingested; also
 * its `ready` message.
 */
async function startQueuedDaemon(name: string, queued: number, tlsFiles: string[] = []) {
  const dir = join(root, name);
  mkdirSync(dir);
  await writeFetcherFile(join(dir, "staging.txt"), queued, 6);
  const daemon = startDaemon(dir, tlsFiles);
  const ready = await daemon.next("ready");
  renameSync(join(dir, "staging.txt"), join(daemon.fetchers, "f1.100.txt"));
  await daemon.next("completed");
  return { daemon, ready };
}

async function readyJobLatency(): Promise<void> {
  const queued = 100_000;
  const { daemon } = await startQueuedDaemon("latency", queued);
  const total = 48_000;
  const latencies = (await roundTrips(daemon.socket, total)).sort((a, b) => a - b);
  await stop(daemon.child);
  const floor = (await rawServerRoundTrips(total)).sort((a, b) => a - b);
  emitLatency("ready_job_p99_ms", latencies, floor, {
    run: { workers: 16, queued },
    baselineName: "p99 of a raw net server answering a fixed JOB, same 16 clients",
    target: "<= 5",
    max: "own",
  });
}

/**
 * Dequeue + finish through the daemons: 16 workers in a client process looping `DONE`→`JOB` on the Unix
 * socket of our daemon (its own process, 100 000 rows queued) and of a model of the original daemon
 * (bench/original-daemon-process.ts, a copy of the same rows in the original's configuration), in alternating
 * turns. Pairs per second: round trips ÷ the time from the start of the loops to the last reply.
 */
async function daemonDequeueFinish(): Promise<void> {
  const queued = 100_000;
  const { daemon } = await startQueuedDaemon("daemons", queued);
  originalConfigDatabase("original-daemon.db", queued);
  const originalSocket = join(root, "daemons", "original.sock");
  const { child: original } = await startReady(originalDaemonScript, [
    join(root, "original-daemon.db"),
    originalSocket,
  ]);
  const workers = 16;
  const turns = 3;
  // the original is fsync-bound per command: far fewer round trips make a turn of similar length
  const perTurn = { ours: workers * 512, original: workers * 32 };
  const pairs = { ours: 0, original: 0 };
  const ms = { ours: 0, original: 0 };
  const turn = async (which: "ours" | "original") => {
    const target = which === "ours" ? daemon.socket : originalSocket;
    const { ms: latencies, elapsedMs } = await roundTripsFromProcesses(target, perTurn[which], workers, 1);
    pairs[which] += latencies.length;
    ms[which] += elapsedMs;
  };
  for (let i = 0; i < turns; i++) {
    for (const which of i % 2 === 0 ? (["ours", "original"] as const) : (["original", "ours"] as const)) {
      await turn(which);
    }
  }
  await stop(daemon.child);
  await stop(original);
  const rate = pairs.ours / (ms.ours / 1000);
  const originalRate = pairs.original / (ms.original / 1000);
  emit({
    name: "dequeue_finish_daemon_per_s",
    value: Math.round(rate),
    unit: "pairs/s",
    roundTrips: pairs.ours,
    workers,
    queued,
    config: "our daemon: WAL, synchronous=FULL, group commits, a reply only after its commit is synced",
    baseline: Math.round(originalRate),
    baselineRoundTrips: pairs.original,
    baselineName:
      "the original daemon modelled: its finish (autocommit) and dequeue (one transaction) per DONE, one command at a time, journal_mode=delete, synchronous=FULL, same 16 workers",
    ratio: round(rate / originalRate),
    target: "ratio >= 10",
  });
}

async function ingestRss(): Promise<void> {
  const dir = join(root, "rss");
  mkdirSync(dir);
  const lines = 1_000_000;
  await writeFetcherFile(join(dir, "staging.txt"), lines, 7);
  const daemon = startDaemon(dir);
  const ready = await daemon.next("ready");
  renameSync(join(dir, "staging.txt"), join(daemon.fetchers, "f1.100.txt"));
  const done = await daemon.next("completed");
  await stop(daemon.child);
  emit({
    name: "ingest_1m_max_rss_mb",
    value: round(Number(done.maxRssMb), 1),
    unit: "MB",
    lines: done.lines,
    ingestMs: Math.round(Number(done.ingestMs)),
    ingestLinesPerS: Math.round(Number(done.lines) / (Number(done.ingestMs) / 1000)),
    baseline: round(Number(ready.maxRssMb), 1),
    baselineName: "peak RSS of the same daemon process, idle, before the file arrives",
    ratio: round(Number(done.maxRssMb) / Number(ready.maxRssMb)),
    target: "< 200",
  });
}

/**
 * 64 workers over TLS on loopback against 64 on the Unix socket, against one daemon in the same run, each
 * looping DONE→JOB, spread over 4 client processes: the two transports take turns (Unix, TLS, Unix, TLS) so
 * that a change of machine load hits both alike; then both at once (2 processes each). Then the daemon's RSS
 * with many idle connections of each kind.
 */
async function tlsAgainstUnix(): Promise<void> {
  const certificates = join(root, "tls-certificates");
  mkdirSync(certificates);
  const ca = makeCa(certificates, "bench-ca");
  const server = makeCertificate(certificates, ca, "server", "/CN=supervisor", { server: true });
  const client = makeCertificate(certificates, ca, "worker", "/O=bench/CN=worker");
  const queued = 100_000;
  const { daemon, ready } = await startQueuedDaemon("tls", queued, [
    server.certFile,
    server.keyFile,
    ca.caFile,
  ]);
  const tls: TlsEndpoint = {
    host: "127.0.0.1",
    port: Number(ready.tlsPort),
    certFile: client.certFile,
    keyFile: client.keyFile,
    caFile: ca.caFile,
  };
  const workers = 64;
  // Long turns: with 64 workers in step, one stalled round (a checkpoint pause, a collection) is 64 samples, so
  // a turn needs well over 6 400 round trips for its p99 to be more than its worst round.
  const perTurn = workers * 160;
  const turns = 2;
  const t: number[] = [];
  const u: number[] = [];
  const processes = 4;
  for (let turn = 0; turn < turns; turn++) {
    u.push(...(await roundTripsFromProcesses(daemon.socket, perTurn, workers, processes)).ms);
    t.push(...(await roundTripsFromProcesses(tls, perTurn, workers, processes)).ms);
  }
  t.sort((a, b) => a - b);
  u.sort((a, b) => a - b);
  emitLatency("tls_ready_job_p99_ms", t, u, {
    run: { workers, queued },
    baselineName: "p99 of 64 Unix-socket workers, same daemon, taking turns with the TLS workers",
    target: "ratio <= 2",
    max: "both",
  });
  const [{ ms: mixedTls }, { ms: mixedUnix }] = await Promise.all([
    roundTripsFromProcesses(tls, perTurn * 2, workers, processes / 2),
    roundTripsFromProcesses(daemon.socket, perTurn * 2, workers, processes / 2),
  ]);
  mixedTls.sort((a, b) => a - b);
  mixedUnix.sort((a, b) => a - b);
  emitLatency("tls_ready_job_p99_ms_mixed", mixedTls, mixedUnix, {
    run: { workers },
    baselineName: "p99 of 64 Unix-socket workers running at the same time as the 64 TLS workers",
    target: "ratio <= 2",
  });
  // The transports' floor: the same client processes against servers in their own processes that answer every
  // line at once, over TLS and on a Unix socket, taking turns; what is left of the ratio is TLS itself.
  const rawUnix = await startReady(rawServerScript, [join(certificates, "raw.sock")]);
  const rawTls = await startReady(rawServerScript, ["-", server.certFile, server.keyFile, ca.caFile]);
  const floorTls: TlsEndpoint = { ...tls, port: rawTls.ready.port! };
  const ft: number[] = [];
  const fu: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    fu.push(
      ...(await roundTripsFromProcesses(join(certificates, "raw.sock"), perTurn, workers, processes)).ms,
    );
    ft.push(...(await roundTripsFromProcesses(floorTls, perTurn, workers, processes)).ms);
  }
  await Promise.all([stop(rawUnix.child), stop(rawTls.child)]);
  ft.sort((a, b) => a - b);
  fu.sort((a, b) => a - b);
  emitLatency("tls_floor_ready_job_p99_ms", ft, fu, {
    run: { workers, processes },
    baselineName:
      "p99 of the same 64 workers against a raw Unix-socket server in its own process answering a fixed JOB, taking turns with a raw TLS server",
    target: "reported",
    max: "both",
  });
  const rss = async () => {
    daemon.child.kill("SIGUSR2");
    return Number((await daemon.next("rss")).rssMb);
  };
  /** Daemon RSS growth per connection: `count` connections opened, each having asked once. */
  const perConnection = async (target: string | TlsEndpoint, count: number) => {
    const before = await rss();
    const clients = await Promise.all(
      Array.from({ length: count }, async () => {
        const c = await SupervisorClient.connect(target);
        await c.ready();
        return c;
      }),
    );
    const after = await rss();
    await Promise.all(clients.map((c) => c.close()));
    return ((after - before) * 2 ** 20) / count;
  };
  // enough connections that the growth is many pages, not the noise of one
  const connections = 512;
  const unixBytes = await perConnection(daemon.socket, connections);
  const tlsBytes = await perConnection(tls, connections);
  await stop(daemon.child);
  emit({
    name: "tls_rss_per_connection_kb",
    value: round(tlsBytes / 1024, 1),
    unit: "KB",
    connections,
    baseline: round(unixBytes / 1024, 1),
    baselineName: "RSS growth per Unix-socket connection, measured the same way just before",
    ...(unixBytes > 0 ? { ratio: round(tlsBytes / unixBytes, 2) } : {}),
    target: "reported",
  });
}

/**
 * The live page of `serve --http` with 100 000 entries queued: the time from sending `GET /` (and
 * `GET /queue.json`, and `GET /metrics`) to the complete response, in the daemon's own process, 30 requests
 * each after 3 to warm up. Baseline: `readQueueStatus` (what `x-supervisor status` reads) on the same file.
 */
async function queuePage(): Promise<void> {
  const dir = join(root, "page");
  mkdirSync(join(dir, "fetchers"), { recursive: true });
  const lines = Array.from({ length: 100_000 }, (_, i) => line(i, 6).join(" "));
  writeFileSync(join(dir, "fetchers", "bulk.1700000000.txt"), `${lines.join("\n")}\n`);
  const sup = await startSupervisor({
    db: join(dir, "state.db"),
    fetchersDir: join(dir, "fetchers"),
    socket: join(dir, "s.sock"),
    http: { port: 0 },
  });
  const { port } = sup.httpAddress()!;
  const time = async (path: string) => {
    const samples: number[] = [];
    for (let i = 0; i < 33; i++) {
      const start = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      await response.text();
      if (i >= 3) samples.push(performance.now() - start);
    }
    return samples.sort((a, b) => a - b);
  };
  const baseline: number[] = [];
  for (let i = 0; i < 33; i++) {
    const start = performance.now();
    readQueueStatus(join(dir, "state.db"));
    if (i >= 3) baseline.push(performance.now() - start);
  }
  baseline.sort((a, b) => a - b);
  const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
  for (const [name, path] of [
    ["queue_page_first_ms", "/"],
    ["queue_json_first_ms", "/queue.json"],
    ["metrics_scrape_ms", "/metrics"],
  ] as const) {
    const samples = await time(path);
    emit({
      name,
      value: round(median(samples), 1),
      unit: "ms (median of 30)",
      max: round(samples.at(-1)!, 1),
      entries: 100_000,
      baseline: round(median(baseline), 1),
      baselineName: "readQueueStatus (x-supervisor status) on the same database, median of 30",
      target: path === "/metrics" ? "reported" : "< 200 ms",
    });
  }
  // A worker's DONE→JOB round trips while the page is requested back to back, against the same without.
  const worker = async (count: number) => {
    const socket = createConnection(join(dir, "s.sock"));
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.setEncoding("utf8");
    let buffer = "";
    const waiting: Array<(line: string) => void> = [];
    socket.on("data", (text: string) => {
      buffer += text;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        waiting.shift()?.(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
      }
    });
    const send = (command: string) =>
      new Promise<string>((resolve) => {
        waiting.push(resolve);
        socket.write(command);
      });
    let attr = (await send("READY\n")).split(" ")[1];
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      attr = (await send(`DONE ${attr} 0\n`)).split(" ")[1];
      samples.push(performance.now() - start);
    }
    socket.destroy();
    return samples.sort((a, b) => a - b);
  };
  const alone = await worker(1_000);
  let reading = true;
  let pages = 0;
  const reader = (async () => {
    while (reading) {
      await (await fetch(`http://127.0.0.1:${port}/`)).text();
      pages++;
    }
  })();
  const withPage = await worker(1_000);
  reading = false;
  await reader;
  emitLatency("done_job_p99_ms_while_page_read", withPage, alone, {
    run: { pagesServed: pages, entries: 100_000 },
    baselineName: "the same worker's DONE→JOB p99 just before, no page requests",
    target: "reported",
  });
  await sup.close();
}

// BENCH_ONLY=storage|enqueue|durable|daemons|latency|rss|tls|page runs one part (for quick iterations); by
// default all run.
const only = process.env.BENCH_ONLY;
if (!only || only === "storage") enqueueAndDequeue();
if (!only || only === "enqueue") enqueueAgainstOriginal();
if (!only || only === "durable") durableDispatch();
if (!only || only === "daemons") await daemonDequeueFinish();
if (!only || only === "latency") await readyJobLatency();
if (!only || only === "rss") await ingestRss();
if (!only || only === "tls") await tlsAgainstUnix();
if (!only || only === "page") await queuePage();
