import { statSync } from "node:fs";
import type { Histogram, Registry } from "prom-client";
import type { DaemonObserver, SupervisorEvents, SupervisorStats } from "./events.js";
import type { SqlReader } from "./queue-reader.js";
import { cyclesStatement, type FetcherCycle, runningCountStatement } from "./queue-view.js";
import { requireAtUse } from "./require-at-use.js";
import type { SupervisorStorage } from "./storage.js";

/** What {@link SupervisorMetrics} reads when scraped. */
export interface MetricsSources {
  storage: SupervisorStorage;
  /** Where the queue's figures are read (the daemon's read thread). */
  reader: () => SqlReader;
  stats: () => SupervisorStats;
  openConnections: () => number;
  /** TLS handshakes in progress now (0 without TLS). */
  tlsHandshakes: () => number;
  /** Subscribes to the daemon's events. */
  on: <K extends keyof SupervisorEvents>(event: K, listener: (...args: SupervisorEvents[K]) => void) => void;
}

/** The command rejections a `reason` label can take, present from the start at 0. */
const commandReasons = ["unknown-command", "bad-done", "command-too-long", "too-many-commands"] as const;

/** An exit code as a label value: the code from -255 to 255, `other` beyond (bounded cardinality). */
function exitCodeLabel(code: number): string {
  return Math.abs(code) <= 255 ? String(code) : "other";
}

/**
 * The daemon's Prometheus metrics (prom-client, in a registry of their own): counters fed by the daemon's
 * events and counters, gauges read from the database when scraped (bounded queries), and the latency and
 * checkpoint-pause histograms fed through {@link DaemonObserver}.
 */
export class SupervisorMetrics implements DaemonObserver {
  /** The registry; `registry.metrics()` gives the text format. */
  readonly registry: Registry;
  #latency: Histogram<"command">;
  #pauses: Histogram;
  #reader: () => SqlReader;
  /** The figures read from the database for the scrape in progress. */
  #read: { cycles: FetcherCycle[]; running: number } = { cycles: [], running: 0 };

  constructor({ storage, reader, stats, openConnections, tlsHandshakes, on }: MetricsSources) {
    // Loaded when the daemon starts, not at import: prom-client costs tens of milliseconds to load (issue #31).
    const { Counter, Gauge, Histogram, Registry } = requireAtUse(
      "prom-client",
    ) as typeof import("prom-client");
    this.registry = new Registry();
    this.#reader = reader;
    const read = () => this.#read;
    const registers = [this.registry];
    /** A counter that follows one of the daemon's counters. */
    const follow = (name: string, help: string, read: (s: SupervisorStats) => number) => {
      let seen = 0;
      new Counter({
        name,
        help,
        registers,
        collect() {
          const now = read(stats());
          if (now > seen) this.inc(now - seen);
          seen = now;
        },
      });
    };
    follow("x_supervisor_dispatches_total", "Jobs handed to workers.", (s) => s.dispatched);
    follow(
      "x_supervisor_connections_total",
      "Worker connections accepted (socket and TLS).",
      (s) => s.connections,
    );
    follow(
      "x_supervisor_connections_rejected_total",
      "Connections refused before the protocol (TLS failures, beyond --max-tls-handshakes or --max-connections).",
      (s) => s.connectionsRejected,
    );
    follow(
      "x_supervisor_lines_ingested_total",
      "Fetcher lines committed to the queue.",
      (s) => s.linesIngested,
    );
    follow("x_supervisor_lines_rejected_total", "Fetcher lines skipped.", (s) => s.linesRejected);
    follow(
      "x_supervisor_files_ignored_total",
      "Fetcher-like directory entries ignored.",
      (s) => s.filesIgnored,
    );
    const done = new Counter({
      name: "x_supervisor_done_total",
      help: "DONE commands accepted, by exit code (-255 to 255, else other).",
      labelNames: ["exit_code"],
      registers,
    });
    on("done", ({ exitCode }) => done.inc({ exit_code: exitCodeLabel(exitCode) }));
    const rejected = new Counter({
      name: "x_supervisor_commands_rejected_total",
      help: "Worker commands rejected (the connection was ended), by reason.",
      labelNames: ["reason"],
      registers,
    });
    for (const reason of commandReasons) rejected.inc({ reason }, 0);
    on("reject", ({ kind, reason }) => {
      if (kind === "command") rejected.inc({ reason });
    });
    new Gauge({
      name: "x_supervisor_connections_open",
      help: "Worker connections open now.",
      registers,
      collect() {
        this.set(openConnections());
      },
    });
    new Gauge({
      name: "x_supervisor_tls_handshakes",
      help: "TLS handshakes in progress now.",
      registers,
      collect() {
        this.set(tlsHandshakes());
      },
    });
    /** A gauge per fetcher, read from the waiting entries when scraped. */
    const perFetcher = (name: string, help: string, value: (c: FetcherCycle) => number | null) =>
      new Gauge({
        name,
        help,
        labelNames: ["fetcher"],
        registers,
        collect() {
          this.reset();
          for (const c of read().cycles) {
            const v = value(c);
            if (v !== null) this.set({ fetcher: c.fetcher }, v);
          }
        },
      });
    perFetcher(
      "x_supervisor_queue_depth",
      "Waiting queue entries ((attr path, fetcher) groups not dispatched), by fetcher.",
      (c) => c.waiting,
    );
    perFetcher(
      "x_supervisor_fetcher_cycle_seconds",
      "Time one pass through a fetcher's queue takes: now minus the last start of its next entry.",
      (c) => (c.cycleMs === null ? null : c.cycleMs / 1000),
    );
    new Gauge({
      name: "x_supervisor_jobs_running",
      help: "Jobs handed out less than 12 h ago and not reported done.",
      registers,
      collect() {
        this.set(read().running);
      },
    });
    new Gauge({
      name: "x_supervisor_wal_size_bytes",
      help: "Size of the database's write-ahead log file.",
      registers,
      collect() {
        this.set(
          storage.db.memory ? 0 : (statSync(`${storage.db.name}-wal`, { throwIfNoEntry: false })?.size ?? 0),
        );
      },
    });
    this.#latency = new Histogram({
      name: "x_supervisor_job_latency_seconds",
      help: "From reading READY (or DONE) to writing the JOB reply, commit and fsync included.",
      labelNames: ["command"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.#latency.zero({ command: "READY" });
    this.#latency.zero({ command: "DONE" });
    this.#pauses = new Histogram({
      name: "x_supervisor_checkpoint_pause_seconds",
      help: "Worker commands held for a RESTART checkpoint of an oversized WAL, per pause.",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
  }

  /**
   * The text format, as `/metrics` serves it: the queue's figures are read first (through the reader, in one
   * snapshot), then every metric is collected.
   */
  async metrics(): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const [cycles, running] = await this.#reader().read([cyclesStatement(now), runningCountStatement(now)]);
    this.#read = { cycles: cycles as FetcherCycle[], running: (running as Array<{ n: number }>)[0]!.n };
    return this.registry.metrics();
  }

  jobReplied(command: "READY" | "DONE", seconds: number): void {
    this.#latency.observe({ command }, seconds);
  }

  checkpointPaused(seconds: number): void {
    this.#pauses.observe(seconds);
  }
}
