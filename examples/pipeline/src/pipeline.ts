import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteCache } from "@x/checkpoint";
import type { Logger } from "@x/core";
import { runWorker, type Supervisor, startSupervisor } from "@x/supervisor";
import { AsyncQueue } from "./async-queue.js";
import type { CatalogReport, CatalogStage } from "./catalog-stage.js";
import type { DemoConfig } from "./config.js";
import { writeFetcherFile } from "./fetcher.js";
import { type Expected, makePlan, parseJob } from "./plan.js";
import { ReferenceFeed } from "./reference-feed.js";
import { type JobResult, type ResultSink, type ResultsReport, runResultsStage } from "./results-stage.js";
import { type GuardActions, type JobOutcome, JobRunner } from "./run-job.js";
import type { StorageReport, StorageStage } from "./storage-stage.js";

/** Outcomes of the jobs as the workers reported them. */
export interface Outcomes {
  ok: number;
  failed: number;
  timedOut: number;
  memory: number;
  /** Any other exit code (a demo bug if non-zero). */
  other: number;
}

/** Everything a run measured; the summary table and `--json` print it. */
export interface Report {
  jobs: number;
  workers: number;
  /** The planned job mix (`runner kind` → count) and the outcomes it must lead to. */
  mix: Record<string, number>;
  expected: Expected;
  fetcher: { file: string; lines: number };
  supervisor: { linesIngested: number; dispatched: number; finished: number };
  outcomes: Outcomes;
  guards: GuardActions;
  results: ResultsReport;
  storage: StorageReport | undefined;
  catalog: CatalogReport | undefined;
  /** From the fetcher's first line to the last result, in ms. */
  wallMs: number;
  jobsPerSecond: number;
  /** The temporary directory, when `--keep` kept it. */
  directory: string | undefined;
}

/** What the progress line shows while the run goes on. */
export interface LiveState {
  stage: string;
  total: number;
  ingested: number;
  outcomes: Outcomes;
  consumed: number;
  paused: boolean;
  startedAt: number;
}

/** Event time of the results: one simulated second per result (see {@link runResultsStage}). */
const SECOND = 1_000;
/** The reference may trail the results by this much event time before the checkpoint calls it down. */
const THRESHOLD_MS = 40 * SECOND;

/**
 * Resolves once the supervisor has recorded a DONE for `total` distinct attr paths (a worker may send a DONE
 * again after a connection error); rejects when `signal` aborts.
 */
function allFinished(
  supervisor: Supervisor,
  finished: Set<string>,
  total: number,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (error?: unknown) => {
      supervisor.off("done", check);
      signal.removeEventListener("abort", onAbort);
      if (error === undefined) resolve();
      else reject(error);
    };
    const check = () => {
      if (finished.size >= total) settle();
    };
    const onAbort = () => settle(signal.reason);
    supervisor.on("done", check);
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) onAbort();
    else check();
  });
}

/**
 * Runs the whole pipeline once in a temporary directory and returns what it measured. Everything it
 * starts (daemon, workers, children, broker topology, catalog) is stopped and removed before it returns
 * or throws.
 */
export async function runPipeline(
  config: DemoConfig,
  live: LiveState,
  hooks: { logger: Logger; onChange: () => void; signal: AbortSignal },
): Promise<Report> {
  const { logger, onChange, signal } = hooks;
  const dir = await mkdtemp(join(tmpdir(), "x-demo-"));
  const cleanup: Array<() => Promise<unknown>> = [];
  try {
    const plan = makePlan(config.jobs);
    const total = plan.jobs.length;
    live.total = total;
    const cache = new SqliteCache(join(dir, "checkpoint.db"));
    cleanup.push(() => cache.close());

    const sinks: ResultSink[] = [];
    let storage: StorageStage | undefined;
    let catalog: CatalogStage | undefined;
    if (config.amqpUrl !== undefined) {
      const url = config.amqpUrl;
      const prefix = `x-demo-${randomBytes(4).toString("hex")}.`;
      const noticeExchange = `${prefix}ermrest_changes`;
      live.stage = "connecting to RabbitMQ";
      onChange();
      // Loaded only with --amqp, so the embedded run needs nothing from these packages.
      const [{ deleteDemoTopology }, { StorageStage }, { CatalogStage }] = await Promise.all([
        import("./amqp-cleanup.js"),
        import("./storage-stage.js"),
        import("./catalog-stage.js"),
      ]);
      storage = await StorageStage.start({ url, dbFile: join(dir, "provenance.db"), prefix, logger });
      cleanup.push(() => deleteDemoTopology(url, prefix, [noticeExchange]));
      cleanup.push(() => storage!.close());
      catalog = await CatalogStage.start({ url, noticeExchange, logger });
      cleanup.push(() => catalog!.close());
      sinks.push(storage, catalog);
    }

    live.stage = "starting the supervisor";
    onChange();
    const socket = join(dir, "supervisor.sock");
    const supervisor = await startSupervisor({
      db: join(dir, "state.db"),
      fetchersDir: join(dir, "fetchers"),
      socket,
      logger,
    });
    cleanup.push(() => supervisor.close());
    const finished = new Set<string>();
    supervisor.on("done", ({ attrPath }) => finished.add(attrPath));
    supervisor.on("ingest", ({ lines }) => {
      live.ingested += lines;
      onChange();
    });

    // Results flow: worker → queue → pausable stream → checkpoint → sinks. The reference feed follows
    // the results' event time and goes down once a quarter of the results have been produced.
    const results = new AsyncQueue<JobResult>();
    const feed = new ReferenceFeed();
    const outageAt = Math.floor(total / 4);
    const eventEpoch = Math.floor(Date.now() / SECOND) * SECOND;
    const outcomes = live.outcomes;
    const record = (outcome: JobOutcome) => {
      if (outcome.exitCode === 0) outcomes.ok++;
      else if (outcome.exitCode === 1) outcomes.failed++;
      else if (outcome.exitCode === 124) outcomes.timedOut++;
      else if (outcome.exitCode === 125) outcomes.memory++;
      else outcomes.other++;
      const seq = results.pushed + 1;
      const eventTime = eventEpoch + seq * SECOND;
      if (seq === outageAt) feed.goDown();
      results.push({ ...outcome, seq, eventTime: new Date(eventTime) });
      feed.advance(eventTime + SECOND);
      if (seq === total) results.end();
      onChange();
    };
    const resultsState = { consumed: 0, paused: false };
    const resultsDone = runResultsStage(
      {
        results,
        feed,
        cache,
        thresholdMs: THRESHOLD_MS,
        outageMs: config.outageMs,
        sinks,
        onChange: () => {
          live.consumed = resultsState.consumed;
          live.paused = resultsState.paused;
          onChange();
        },
        signal,
      },
      resultsState,
    );
    resultsDone.catch(() => {}); // awaited below; this only keeps an early failure from being unhandled

    const runner = new JobRunner({
      timeoutMs: config.timeoutMs,
      graceMs: config.graceMs,
      maxMemoryBytes: config.maxMemoryBytes,
      logger,
    });
    const stopWorkers = new AbortController();
    setMaxListeners(4 * config.workers + 10, stopWorkers.signal);
    const workers = Array.from({ length: config.workers }, () =>
      runWorker({
        socket,
        idleDelayMs: 100,
        reconnectDelayMs: 250,
        signal: stopWorkers.signal,
        logger,
        run: async (job, jobSignal) => {
          const spec = parseJob(job.attrPath, job.payload);
          if (spec === undefined) {
            logger.warn({ job }, "not a demo job");
            return 2;
          }
          const startedAt = performance.now();
          const exitCode = await runner.run(spec, jobSignal);
          if (!jobSignal.aborted) record({ job: spec, exitCode, ms: performance.now() - startedAt });
          return exitCode;
        },
      }),
    );
    cleanup.push(async () => {
      stopWorkers.abort();
      await Promise.all(workers);
    });

    live.stage = "running";
    live.startedAt = performance.now();
    onChange();
    const fetched = await writeFetcherFile(join(dir, "fetchers"), plan.jobs);
    await Promise.all([allFinished(supervisor, finished, total, signal), resultsDone]);
    const resultsReport = await resultsDone;
    const wallMs = performance.now() - live.startedAt;
    stopWorkers.abort();
    await Promise.all(workers);
    const stats = supervisor.stats();

    live.stage = "finishing";
    onChange();
    const storageReport = await storage?.finish();
    const catalogReport = await catalog?.finish(signal);
    return {
      jobs: total,
      workers: config.workers,
      mix: plan.mix,
      expected: plan.expected,
      fetcher: { file: fetched.file.slice(dir.length + 1), lines: fetched.lines },
      supervisor: {
        linesIngested: stats.linesIngested,
        dispatched: stats.dispatched,
        finished: finished.size,
      },
      outcomes: { ...outcomes },
      guards: runner.actions,
      results: resultsReport,
      storage: storageReport,
      catalog: catalogReport,
      wallMs,
      jobsPerSecond: total / (wallMs / 1000),
      directory: config.keep ? dir : undefined,
    };
  } finally {
    live.stage = "cleaning up";
    onChange();
    for (const step of cleanup.reverse()) {
      await step().catch((error: unknown) => logger.warn({ err: error }, "cleanup step failed"));
    }
    if (!config.keep) await rm(dir, { recursive: true, force: true });
  }
}
