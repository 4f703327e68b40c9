// The scenario every engine adapter runs against its real server: a dependent stream of records priced from a
// dependency that stalls mid-way, past its threshold, then recovers. It checks that the broker delivered
// nothing while the dependent was paused, and that every record from the checkpointed position on was
// processed again, none skipped; optionally with the broker, or the process, restarted during the pause.
import { once } from "node:events";
import { join } from "node:path";
import { testTempDir } from "@x/test-support/temp-dir";
import { expect } from "vitest";
import type { BrokerStream } from "../src/engines/broker-stream.js";
import { Checkpoint, Dependency, MemoryCache, SqliteCache } from "../src/index.js";

/** One engine, as the scenario drives it. */
export interface ScenarioEngine<R, P> {
  /** A new stream on a new client, reading the dependent records (already produced) from the first one. */
  open(): Promise<{ stream: BrokerStream<R, P>; close(): Promise<void> }>;
  /** The index the test wrote into a dependent record. */
  indexOf(record: R): number;
  /** Restarts the (private) broker and returns once it answers again. */
  restart?(): Promise<void>;
}

/** How the pause is disturbed: not at all, by a broker restart, or by a restart of the consuming process. */
export type ScenarioMode = "plain" | "broker-restart" | "process-restart";

/** Dependent record `index` happened at `T0 + index` seconds. */
const T0 = Date.UTC(2025, 0, 1);
export const timeOf = (index: number) => new Date(T0 + index * 1_000);

const THRESHOLD_MS = 100_000;

/** Options of {@link runScenario}. */
export interface ScenarioOptions {
  /** How many dependent records the engine holds. */
  count: number;
  /** The first record after which the dependency is silent. */
  stallAt: number;
  /** How long to watch the paused stream for deliveries, in ms (at least a few poll periods of the adapter). */
  watchMs: number;
}

/** One consuming "process": a stream, a checkpoint, and the loop that processes the records. */
interface Consumer<R, P> {
  stream: BrokerStream<R, P>;
  checkpoint: Checkpoint;
  /** Indices handed to the loop, in order. */
  processed: number[];
  /** Deliveries counted when the recovery callback ran. */
  deliveriesAtRecovery: number | undefined;
  /** The loop, which ends after the last record. */
  done: Promise<void>;
  close(): Promise<void>;
}

export async function runScenario<R, P>(
  engine: ScenarioEngine<R, P>,
  mode: ScenarioMode,
  { count, stallAt, watchMs }: ScenarioOptions,
): Promise<void> {
  const file = join(testTempDir("x-checkpoint-engine-"), "checkpoints.db");
  const caches: SqliteCache[] = [];
  const cacheFor = () => {
    if (mode !== "process-restart") return new MemoryCache();
    const cache = new SqliteCache(file);
    caches.push(cache);
    return cache;
  };
  const prices = { stallAt, recovered: false };
  const consumers: Consumer<R, P>[] = [];
  try {
    const first = await startConsumer(engine, cacheFor(), prices, count);
    consumers.push(first);
    const detectedAt = stallAt + THRESHOLD_MS / 1_000;
    // The dependency stalls: the loop sends no price after record stallAt − 1 until it recovers. The "down"
    // event comes once the pause has resolved, that is once the broker has stopped delivering.
    await Promise.race([once(first.checkpoint, "down"), first.done]);
    expect(first.stream.paused).toBe(true);
    const deliveriesAtPause = first.stream.deliveries;
    // Processed up to the record whose pulse detected the downtime, and nothing after it.
    expect(first.processed).toEqual(range(0, detectedAt + 1));

    // A late price during the downtime: it snapshots the offsets at detection.
    const late = await first.checkpoint.heartbeat(timeOf(stallAt + 10));
    expect(late.isLate).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, watchMs));

    let current = first;
    if (mode === "broker-restart") {
      await engine.restart?.();
      await new Promise((resolve) => setTimeout(resolve, watchMs));
    }
    if (mode === "process-restart") {
      await first.close();
      for (const cache of caches.splice(0)) await cache.close();
      current = await startConsumer(engine, cacheFor(), prices, count);
      consumers.push(current);
      expect(current.stream.paused).toBe(true); // paused by the constructor, from the persisted downtime
      await new Promise((resolve) => setTimeout(resolve, watchMs));
      expect(current.stream.deliveries).toBe(0);
      expect(current.processed).toEqual([]);
    }
    expect(first.stream.deliveries).toBe(deliveriesAtPause);
    expect(first.processed).toHaveLength(detectedAt + 1);

    // The dependency catches up: the recovery callback seeks back, then the stream resumes.
    prices.recovered = true;
    const recovered = await current.checkpoint.heartbeat(timeOf(detectedAt + 1));
    expect(recovered.isLate).toBe(false);
    await current.done;
    if (current === first) expect(first.deliveriesAtRecovery).toBe(deliveriesAtPause);
    else expect(current.deliveriesAtRecovery).toBe(0);
    const replayed = current === first ? current.processed.slice(detectedAt + 1) : current.processed;
    // Every record from the checkpointed one (processed with stale prices) on, in order, none skipped.
    expect(replayed).toEqual(range(detectedAt, count));
  } finally {
    for (const consumer of consumers) await consumer.close();
    for (const cache of caches) await cache.close();
  }
}

async function startConsumer<R, P>(
  engine: ScenarioEngine<R, P>,
  cache: MemoryCache | SqliteCache,
  prices: { stallAt: number; recovered: boolean },
  count: number,
): Promise<Consumer<R, P>> {
  const { stream, close } = await engine.open();
  const consumer: Consumer<R, P> = {
    stream,
    processed: [],
    deliveriesAtRecovery: undefined,
    checkpoint: new Checkpoint("orders", {
      dependent: stream,
      dependencies: [new Dependency("prices", { downtimeThresholdMs: THRESHOLD_MS })],
      cache,
      recoveryCallback: async (_cp, dep) => {
        consumer.deliveriesAtRecovery = stream.deliveries;
        await stream.seek((dep.checkpointState as { position: P }).position);
      },
    }),
    done: Promise.resolve(),
    close,
  };
  consumer.done = (async () => {
    for await (const record of stream) {
      const index = engine.indexOf(record);
      consumer.processed.push(index);
      if (index < prices.stallAt || prices.recovered) await consumer.checkpoint.heartbeat(timeOf(index));
      await consumer.checkpoint.checkPulse(timeOf(index), { position: stream.position });
      if (index === count - 1) break;
    }
  })();
  consumer.done.catch(() => {});
  return consumer;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, offset) => from + offset);
}
