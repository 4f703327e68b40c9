import type { EventEmitter } from "node:events";
import type { Logger } from "@x/core";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ManagementApi } from "./management.js";
import type { ServerEvents } from "./queue-worker.js";
import type { QueueSpec } from "./routing.js";

/** What {@link RmqStorageMetrics} reads. */
export interface MetricsSources {
  /** The queues the server serves, by their full (prefixed) names. */
  queues: ReadonlyMap<string, QueueSpec>;
  /** The server, whose events feed the counters (a server with `processes > 1` forwards its children's). */
  events: Pick<EventEmitter<ServerEvents>, "on">;
  /**
   * The management API, to tell which of the server's consumers the broker delivers to; `undefined` when
   * none is known (the `x_rmq_storage_queue_active` and `x_rmq_storage_management_up` gauges are then left
   * out).
   */
  management: ManagementApi | undefined;
  /** The connection names of the server's processes; its consumer tags are `<name> <queue>`. */
  names: () => readonly string[];
  logger: Logger;
}

const queueLabels = ["range", "method", "relation"] as const;
type QueueLabels = Record<(typeof queueLabels)[number], string>;

/** The management API and the gauges read from it. */
interface ConsumerGauges {
  management: ManagementApi;
  active: Gauge<(typeof queueLabels)[number]>;
  up: Gauge;
}

/** A queue's labels: its range, write method and relation (`unknown` but for `relation_add`, as in its name). */
function labelsOf(spec: QueueSpec): QueueLabels {
  return { range: spec.range, method: spec.method, relation: spec.relation ?? "unknown" };
}

/**
 * The server's Prometheus metrics (prom-client, in a registry of their own): counters and the commit
 * histogram fed by the server's events, and gauges read from the management API when scraped.
 */
export class RmqStorageMetrics {
  /** The registry; {@link metrics} gives its text format. */
  readonly registry = new Registry();
  readonly #sources: MetricsSources;
  /** The gauges read from the management API, when there is one. */
  readonly #consumers: ConsumerGauges | undefined;
  /** Whether the management API answered the last scrape, to log its failures once, not on every scrape. */
  #managementAnswered = true;

  constructor(sources: MetricsSources) {
    this.#sources = sources;
    const registers = [this.registry];
    const perQueue = (name: string, help: string) =>
      new Counter({ name, help, labelNames: queueLabels, registers });
    const items = perQueue("x_rmq_storage_items_total", "Items written to the storage and acknowledged.");
    const messages = perQueue(
      "x_rmq_storage_messages_total",
      "Messages whose items were written, answered and acknowledged.",
    );
    const batches = perQueue("x_rmq_storage_batches_total", "Storage calls that committed (one per batch).");
    const requeues = perQueue(
      "x_rmq_storage_requeues_total",
      "Batches whose storage write failed; their messages went back to the queue after a backoff.",
    );
    const deadLetters = perQueue(
      "x_rmq_storage_dead_letters_total",
      "Invalid requests answered with an error and rejected to the dead-letter queue.",
    );
    const commits = new Histogram({
      name: "x_rmq_storage_commit_duration_seconds",
      help: "From a batch's storage call to its acknowledgement (write, commit, replies), per batch.",
      labelNames: ["method", "relation"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    const reconnects = new Counter({
      name: "x_rmq_storage_reconnects_total",
      help: "Attempts to reconnect after the broker connection was lost.",
      registers,
    });
    for (const spec of sources.queues.values()) {
      const labels = labelsOf(spec);
      for (const counter of [items, messages, batches, requeues, deadLetters]) counter.inc(labels, 0);
      commits.zero({ method: labels.method, relation: labels.relation });
    }
    /** The labels of an event's queue; `undefined` for a queue the server does not serve (never expected). */
    const labels = (queue: string) => {
      const spec = sources.queues.get(queue);
      return spec === undefined ? undefined : labelsOf(spec);
    };
    sources.events.on("batch", (batch) => {
      const l = labels(batch.queue);
      if (l === undefined) return;
      items.inc(l, batch.items);
      messages.inc(l, batch.messages);
      batches.inc(l);
      commits.observe({ method: l.method, relation: l.relation }, batch.durationMs / 1000);
    });
    sources.events.on("storage-error", ({ queue }) => {
      const l = labels(queue);
      if (l !== undefined) requeues.inc(l);
    });
    sources.events.on("dead-letter", ({ queue }) => {
      const l = labels(queue);
      if (l !== undefined) deadLetters.inc(l);
    });
    sources.events.on("reconnect", () => reconnects.inc());
    if (sources.management !== undefined)
      this.#consumers = {
        management: sources.management,
        active: new Gauge({
          name: "x_rmq_storage_queue_active",
          help: "Whether the broker delivers this queue to this server (1: active) or to another one (0: standby, waiting to take over).",
          labelNames: queueLabels,
          registers,
        }),
        up: new Gauge({
          name: "x_rmq_storage_management_up",
          help: "Whether the last scrape could read the consumers from the broker's management API (1) or not (0).",
          registers,
        }),
      };
  }

  /**
   * The text format, as `/metrics` serves it: the consumers are read from the management API first (when
   * there is one; its failure is logged and leaves `x_rmq_storage_queue_active` out of this scrape), then
   * every metric is collected.
   */
  async metrics(): Promise<string> {
    if (this.#consumers !== undefined) await this.#readConsumers(this.#consumers);
    return this.registry.metrics();
  }

  async #readConsumers({ management, active, up }: ConsumerGauges): Promise<void> {
    const { queues, names, logger } = this.#sources;
    active.reset();
    try {
      // A consumer tag names its queue, so the tags the broker delivers to are enough.
      const delivering = new Set((await management.consumers()).filter((c) => c.active).map((c) => c.tag));
      const own = names();
      for (const [queue, spec] of queues)
        active.set(labelsOf(spec), own.some((name) => delivering.has(`${name} ${queue}`)) ? 1 : 0);
      up.set(1);
      if (!this.#managementAnswered) logger.info("metrics: the management API answers again");
      this.#managementAnswered = true;
    } catch (error) {
      up.set(0);
      if (this.#managementAnswered)
        logger.warn({ err: error }, "metrics: the management API did not answer; queue_active left out");
      this.#managementAnswered = false;
    }
  }
}
