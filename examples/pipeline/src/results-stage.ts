import { Checkpoint, type CheckpointCache, Dependency, pausable } from "@x/checkpoint";
import type { AsyncQueue } from "./async-queue.js";
import type { ReferenceFeed } from "./reference-feed.js";
import type { JobOutcome } from "./run-job.js";

/** A job's outcome as it enters the results stream. */
export interface JobResult extends JobOutcome {
  /** Position in the stream, from 1. */
  seq: number;
  /** Simulated event time: one second per result, so the demo behaves the same on any machine. */
  eventTime: Date;
}

/** A result after the stage has enriched it with the reference stream's newest time. */
export interface EnrichedResult extends JobResult {
  reference: Date | undefined;
}

/** Where enriched results go next (the storage and catalog stages). */
export interface ResultSink {
  /** `correction` is true when a result is sent again after the reference stream recovered. */
  add(result: EnrichedResult, correction: boolean): void;
}

/** What the results stage saw. */
export interface ResultsReport {
  consumed: number;
  /** Downtime episodes of the reference stream that the checkpoint detected. */
  downtimes: number;
  /** Time the results stream spent paused, in ms. */
  pausedMs: number;
  /** Results enriched with stale reference data and processed again after the recovery. */
  reprocessed: number;
}

/** Options of {@link runResultsStage}. */
export interface ResultsStageOptions {
  results: AsyncQueue<JobResult>;
  feed: ReferenceFeed;
  /** Where the checkpoint keeps its state (a `SqliteCache` in the demo). */
  cache: CheckpointCache;
  /** How far (in event time, ms) the reference may trail the results before it counts as down. */
  thresholdMs: number;
  /** How long the reference stays down once the checkpoint has noticed, in ms. */
  outageMs: number;
  sinks: ResultSink[];
  /** Called after each result and at each pause and resume (for the progress line). */
  onChange: () => void;
  signal: AbortSignal;
}

/** The live state of the results stage, for the progress line. */
export interface ResultsState {
  consumed: number;
  paused: boolean;
}

/**
 * Streams the results through an @x/checkpoint. The dependent is the results stream (made pausable); the
 * one dependency is the reference feed, whose heartbeats say how far it has got. When it falls more than
 * `thresholdMs` behind, the checkpoint pauses the results; when it catches up, the recovery callback
 * reprocesses the results handled since the reference's last good heartbeat, and the stream resumes.
 */
export async function runResultsStage(
  options: ResultsStageOptions,
  state: ResultsState,
): Promise<ResultsReport> {
  const { results, feed, cache, thresholdMs, outageMs, sinks, onChange, signal } = options;
  const report: ResultsReport = { consumed: 0, downtimes: 0, pausedMs: 0, reprocessed: 0 };
  const processed: EnrichedResult[] = [];
  const stream = pausable(results);
  const reference = new Dependency("reference", { stream: feed, downtimeThresholdMs: thresholdMs });
  const offsetOf = (value: unknown) => (value as { offset?: number } | undefined)?.offset ?? 0;
  let suspectFrom = 0;
  let pausedAt = 0;
  let outage: NodeJS.Timeout | undefined;

  const checkpoint = new Checkpoint("results", {
    dependent: stream,
    dependencies: [reference],
    cache,
    // The dependency's checkpoint state is the results offset at its last good heartbeat: every result
    // after it was enriched with reference data that may be stale.
    downtimeCallback: (_cp, dependency) => {
      suspectFrom = offsetOf(dependency.checkpointState);
    },
    // Runs before the resume, so nothing is pulled while the suspect results are reprocessed.
    recoveryCallback: (_cp, dependency) => {
      const upTo = offsetOf(dependency.checkpointState);
      for (const result of processed.slice(suspectFrom, upTo)) {
        const corrected = { ...result, reference: reference.checkpointMarker as Date };
        for (const sink of sinks) sink.add(corrected, true);
        report.reprocessed++;
      }
    },
  });
  checkpoint.on("down", () => {
    report.downtimes++;
    pausedAt = performance.now();
    state.paused = true;
    onChange();
    outage = setTimeout(() => feed.comeBack(), outageMs);
  });
  checkpoint.on("up", () => {
    report.pausedMs += performance.now() - pausedAt;
    state.paused = false;
    onChange();
  });

  const stop = () => {
    void stream.return(undefined);
    feed.close();
  };
  signal.addEventListener("abort", stop, { once: true });
  const heartbeats = (async () => {
    for await (const marker of feed) await checkpoint.heartbeat(marker, "reference");
  })();
  heartbeats.catch(stop); // a failed heartbeat ends the stage; the error is rethrown below
  try {
    for await (const result of stream) {
      const enriched: EnrichedResult = {
        ...result,
        reference: reference.checkpointMarker as Date | undefined,
      };
      processed.push(enriched);
      for (const sink of sinks) sink.add(enriched, false);
      report.consumed++;
      state.consumed = report.consumed;
      await checkpoint.checkPulse(result.eventTime, { offset: report.consumed });
      onChange();
    }
  } finally {
    signal.removeEventListener("abort", stop);
    clearTimeout(outage);
    feed.close();
    await heartbeats;
  }
  signal.throwIfAborted();
  return report;
}
