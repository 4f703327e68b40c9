import { EventEmitter } from "node:events";
import type { InspectOptions, inspect } from "node:util";
import { type Logger, sleep, XError } from "@x/core";
import {
  allowedHostsSchema,
  durationMs,
  inspectAs,
  inspectCustom,
  parseOptions,
  ReadOnlyHttpServer,
  redactUrl,
  textAnswer,
  v,
} from "@x/core/internal";
import type { Channel, ChannelModel } from "amqplib";
import { declareTopology, type QueueKind, type Topology, topology } from "./amqp.js";
import { connectBroker, reconnectBackoff, redactUrls, urlList } from "./connect.js";
import { DEFAULT_MAX_CONCURRENT_WRITES, DEFAULT_MAX_ITEMS_PER_WRITE, defaultPrefetch } from "./defaults.js";
import { backendError, ErrorCode, RmqStorageError } from "./errors.js";
import { InFlightWindow } from "./in-flight.js";
import { type ManagementApi, managementApi, managementBase } from "./management.js";
import { brokerOptions, intIn, renamedOption } from "./option-schemas.js";
import { type ProcessGroup, startProcessGroup } from "./process-group.js";
import { QueueWorker, type ServerEvents } from "./queue-worker.js";
import { formatRanges, parseRanges } from "./ranges.js";
import { ranges as allRanges, type QueueSpec, workerQueues } from "./routing.js";
import { checkSecretOptions } from "./secrets.js";
import { isStorageSpec, openStorage } from "./storage-spec.js";
import type { ProvenanceStorage } from "./types.js";
import { MAX_ITEMS } from "./wire.js";

export type { ServerEvents } from "./queue-worker.js";

/** Options of {@link RmqStorageServer.start}. */
export interface RmqStorageServerOptions {
  /**
   * The broker, `amqp://` or `amqps://`; or the nodes of a cluster, a list of such URLs: the server connects
   * to the first that answers and, when its connection is lost, moves on to the next one. Required.
   */
  url: string | string[];
  /**
   * `"classic"` (default): classic queues, as in swh-provenance, for a single broker. `"quorum"`: quorum
   * queues, replicated on the nodes of a RabbitMQ cluster (a message confirmed to the client survives while a
   * majority of them do), with single active consumer and a {@link deliveryLimit}; the dead-letter queues are
   * quorum queues too. Every server of a topology must use the same type: a queue declared with the other
   * one rejects with `ERR_X_RMQ_STORAGE_TOPOLOGY`.
   */
  queueType?: "classic" | "quorum";
  /**
   * With `queueType: "quorum"` only: after this many failed deliveries of a message (its batch could not be
   * written, or the server died holding it) the broker dead-letters it to `<exchange>.dead` instead of
   * delivering it again. An integer 1…1 000 000. Default 20 (RabbitMQ 4's default).
   */
  deliveryLimit?: number;
  /**
   * Where to write: a factory called once per server process (the server closes what it returns), or a
   * string `sqlite:PATH` / `postgres://…[?schema=NAME]` (required with `processes > 1`). Required.
   */
  storage: (() => ProvenanceStorage | Promise<ProvenanceStorage>) | string;
  /**
   * Most items per storage call: a queue's worker merges the messages it holds, whole, up to this many
   * items into one write (a larger message is written alone), never waiting for more: a lone small write
   * goes out at once. Integer 1…100 000. Default 10 000 (swh-provenance's `batch_size` was 100). The
   * client's `itemsPerMessage` sets how many items each message carries.
   */
  maxItemsPerWrite?: number;
  /**
   * Storage calls in flight at once, across all the queues this server (each of its processes) serves. A
   * queue whose next write finds every slot busy goes on gathering deliveries (up to `maxItemsPerWrite`
   * items and its `prefetch`) and writes them together once a slot frees: a storage that cannot keep up
   * gets fewer, larger transactions, and one that can still gets each delivery at once. Raise it for a
   * PostgreSQL server with many cores (its pool has 10 connections); SQLite has one writer anyway. Integer
   * 1…1 000. Default 4.
   */
  maxConcurrentWrites?: number;
  /**
   * Unacknowledged messages the server holds per queue. Integer 1…65 535. Default: room for two full writes
   * of 1 000-item messages, 2 × ⌈`maxItemsPerWrite` / 1 000⌉ (20 with the default `maxItemsPerWrite`).
   */
  prefetch?: number;
  /** Node processes serving the 16 ranges (contiguous groups); an integer 1…16, more than 1 needs a string `storage`. Default 1. */
  processes?: number;
  /** How long to try to reach the broker at start, in ms; an integer 1…3 600 000. Default 30 000. */
  connectTimeoutMs?: number;
  /**
   * AMQP heartbeat interval, in ms; an integer 0…3 600 000, rounded up to whole seconds (AMQP negotiates
   * heartbeats in seconds), 0 disables heartbeats. A `heartbeat` query parameter of `url` (in seconds, as in
   * swh-provenance) takes precedence. Default 10 000.
   */
  heartbeatMs?: number;
  /**
   * A prefix for every exchange and queue name, to run several independent topologies on one broker: the
   * names become `<prefix>.<name>` (`tenant1` gives `tenant1.content_add.unknown.0`; a prefix ending in `.`
   * gets no second one). Letters, digits, `_`, `-`, `.` and `:`. Default `""`: the names of swh-provenance
   * (see the README's "Routing table").
   */
  prefix?: string;
  /**
   * The ranges (first hex digits of the ids) this server serves: a list of digits (`["0", "1"]`) or a string
   * of digits and spans (`"0-7"`, `"8-f"`, `"0,3,a-c"`). Default all 16. Several servers (on several
   * machines) with disjoint ranges share the write load; see {@link standbyWaitMs} for their standbys.
   */
  ranges?: string[] | string;
  /**
   * Makes this server a standby for its ranges: on every connect (at start and after a reconnect) it
   * registers its consumer on a queue only once that queue already has one (another server's, which stays
   * the active one: RabbitMQ gives a single-active-consumer queue to the consumer registered first), or
   * after this many ms when none comes (then it is the active one). In ms, an integer 0…3 600 000; 0
   * (default): register at once. For the two-host layout of the README's "Deployment".
   */
  standbyWaitMs?: number;
  /**
   * Serves Prometheus metrics at `http://host:port/metrics` (see the README's "Metrics"), from the parent
   * process when `processes > 1`. Default: none.
   */
  metrics?: MetricsEndpoint;
  /** Where the server logs. Default: silent. */
  logger?: Logger;
}

/** Where {@link RmqStorageServer} serves its metrics (`metrics` in its options). */
export interface MetricsEndpoint {
  /** Host name or IP address to listen on. Default `127.0.0.1` (loopback only): there is no authentication. */
  host?: string;
  /** TCP port; `0` picks a free one, see {@link RmqStorageServer.metricsAddress}. */
  port: number;
  /**
   * The broker's management API, for `x_rmq_storage_queue_active` (which consumer the broker delivers to),
   * with the AMQP credentials unless it names its own. Default as for `queueStats`: `https://<host>:15671`
   * for `amqps://`, `http://<host>:15672` for `amqp://` to a loopback host; for `amqp://` to any other host,
   * none (the gauge is left out, rather than send the password in clear), unless given.
   */
  management?: string;
  /**
   * Host names (without a port) that scrapers may name in the `Host` header besides `localhost`, `host` and
   * IP addresses, such as the machine's DNS name. A request for any other name is answered 421, so that a web
   * page cannot read the metrics through DNS rebinding. Default none.
   */
  allowedHosts?: string[];
}

const rangesError =
  'a list of distinct hex digits, or a string of digits and spans such as "0-7" or "0,3,a-c"';

const optionsSchema = v
  .strictObject({
    ...brokerOptions,
    storage: v.union(
      [
        v.custom<() => ProvenanceStorage>((value) => typeof value === "function"),
        v.string().refine(isStorageSpec),
      ],
      { error: "a storage factory, sqlite:PATH or postgres://…" },
    ),
    maxItemsPerWrite: intIn("number of items", 1, MAX_ITEMS).default(DEFAULT_MAX_ITEMS_PER_WRITE),
    batchSize: renamedOption("maxItemsPerWrite"),
    maxConcurrentWrites: intIn("number of writes", 1, 1_000).default(DEFAULT_MAX_CONCURRENT_WRITES),
    prefetch: intIn("number of messages", 1, 65_535).optional(),
    processes: intIn("number of processes", 1, 16).default(1),
    ranges: v
      .preprocess(
        (value) => (typeof value === "string" ? (parseRanges(value) ?? value) : value),
        v
          .array(v.enum(allRanges as [string, ...string[]], { error: rangesError }), { error: rangesError })
          .min(1, { error: rangesError })
          .refine((list) => new Set(list).size === list.length, { error: rangesError }),
      )
      .default([...allRanges]),
    standbyWaitMs: durationMs({ max: 3_600_000, integer: true }).default(0),
    queueType: v.enum(["classic", "quorum"], { error: '"classic" or "quorum"' }).default("classic"),
    deliveryLimit: intIn("number of deliveries", 1, 1_000_000).optional(),
    metrics: v
      .strictObject({
        host: v.string({ error: "a host name or IP address" }).min(1).default("127.0.0.1"),
        port: intIn("TCP port", 0, 65_535),
        management: v.string({ error: "an http:// or https:// URL" }).optional(),
        allowedHosts: allowedHostsSchema,
      })
      .optional(),
  })
  .refine((options) => options.processes === 1 || typeof options.storage === "string", {
    path: ["processes"],
    error: "1 unless storage is a string (sqlite:PATH or postgres://…)",
  })
  .refine((options) => options.deliveryLimit === undefined || options.queueType === "quorum", {
    path: ["deliveryLimit"],
    error: 'nothing unless queueType is "quorum" (classic queues have no delivery limit)',
  })
  .transform((options) => ({
    ...options,
    prefetch: options.prefetch ?? defaultPrefetch(options.maxItemsPerWrite),
  }));

/** The default `deliveryLimit` of quorum queues: RabbitMQ 4's own default. */
const DEFAULT_DELIVERY_LIMIT = 20;

type Parsed = v.Output<typeof optionsSchema>;

/**
 * The worker side: declares the topology, consumes the worker queues with single active consumers, merges
 * each queue's messages in batches, writes them, replies, and only then acknowledges. Any number of
 * servers may run against one broker (hot standby). Emits {@link ServerEvents}.
 *
 * @example
 * ```ts
 * const server = await RmqStorageServer.start({ url: "amqp://localhost", storage: "sqlite:provenance.db" });
 * process.once("SIGTERM", () => server.stop());
 * ```
 */
export class RmqStorageServer extends EventEmitter<ServerEvents> {
  readonly #options: Parsed;
  readonly #top: Topology;
  /** The connection's name on the broker, also the start of its consumer tags: host, pid, ranges, role. */
  readonly #name: string;
  readonly #workers = new Map<string, QueueWorker>();
  readonly #reconnecting = new AbortController();
  #storage: ProvenanceStorage | undefined;
  #connection: ChannelModel | undefined;
  #channel: Channel | undefined;
  #consumers: string[] = [];
  #group: ProcessGroup | undefined;
  #metrics: ReadOnlyHttpServer | undefined;
  #stopped: Promise<void> | undefined;
  /** Counts lost connections: each reconnect starts with the next broker address. */
  #turn = 0;

  /** `RmqStorageServer { url, storage, prefix, ranges, processes }`, the URLs' passwords shown as `***`. */
  [inspectCustom](depth: number, options: InspectOptions, insp: typeof inspect): string {
    return inspectAs("RmqStorageServer", this.toJSON(), depth, options, insp);
  }

  /** What `JSON.stringify` shows: the URL and the storage with their secrets as `***`. */
  toJSON(): { url: string | string[]; storage: string; prefix: string; ranges: string; processes: number } {
    const { url, storage, prefix, ranges, processes } = this.#options;
    return {
      url: redactUrls(url),
      storage: typeof storage === "string" ? redactUrl(storage) : "(factory)",
      prefix,
      ranges: formatRanges(ranges),
      processes,
    };
  }

  /** What `String()` shows: `RmqStorageServer <broker URL> <storage>`, the secrets as `***`. */
  override toString(): string {
    const { url, storage } = this.toJSON();
    return `RmqStorageServer ${[url].flat().join(" ")} ${storage}`;
  }

  private constructor(options: Parsed) {
    super();
    this.#options = options;
    this.#top = topology(options.prefix);
    const standby = options.standbyWaitMs > 0 ? " standby" : "";
    // node:os from getBuiltinModule, not an import: its ESM import costs the package import time (#31)
    const host = process.getBuiltinModule("node:os").hostname();
    this.#name = `x-rmq-storage ${host} pid ${process.pid} ranges ${formatRanges(options.ranges)}${standby}`;
  }

  /**
   * Validates the options, opens the storage, connects, declares the topology and registers a consumer on
   * every worker queue of its ranges (with `processes > 1`, every child does so for its ranges); resolves once
   * all of that is done. From then on the server is ready: a write to its ranges is served. (`x-rmq-storage
   * serve` prints its ready line at this point; a client elsewhere can wait with
   * `RmqStorageClient.waitForServer`.)
   *
   * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` (before anything else), `ERR_X_RMQ_STORAGE_BACKEND`,
   *   `ERR_X_RMQ_STORAGE_CONNECT`, `ERR_X_RMQ_STORAGE_TOPOLOGY`
   */
  static async start(options: RmqStorageServerOptions): Promise<RmqStorageServer> {
    checkSecretOptions(options);
    const parsed = parseOptions(optionsSchema, options, ErrorCode.INVALID_OPTION, RmqStorageError);
    const server = new RmqStorageServer(parsed);
    if (parsed.metrics !== undefined) server.#metrics = await server.#serveMetrics(parsed.metrics);
    try {
      if (parsed.processes > 1) {
        const { metrics: _parentOnly, ...forChildren } = parsed;
        server.#group = await startProcessGroup(
          { ...forChildren, storage: parsed.storage as string },
          (event, payload) => (server.emit as (e: string, p: unknown) => boolean)(event, payload),
        );
      } else await server.#start();
    } catch (error) {
      await server.#metrics?.close();
      throw error;
    }
    return server;
  }

  /** The queues this server serves, by their full names. */
  #servedQueues(): Map<string, QueueSpec> {
    return new Map(
      workerQueues
        .filter((spec) => this.#options.ranges.includes(spec.range))
        .map((spec) => [this.#top.queue(spec), spec]),
    );
  }

  /**
   * Starts the metrics listener, before the workers so that it counts every batch.
   *
   * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` when the address cannot be bound, or for a bad `management`
   */
  async #serveMetrics(endpoint: NonNullable<Parsed["metrics"]>): Promise<ReadOnlyHttpServer> {
    const { url, logger } = this.#options;
    const management = metricsManagement(urlList(url)[0] as string, endpoint.management, logger);
    const { RmqStorageMetrics } = await import("./metrics.js");
    const metrics = new RmqStorageMetrics({
      queues: this.#servedQueues(),
      events: this,
      management,
      names: () => this.connectionNames(),
      logger,
    });
    const listener = new ReadOnlyHttpServer(
      endpoint,
      async (request) =>
        request.pathname === "/metrics"
          ? { type: metrics.registry.contentType, body: await metrics.metrics() }
          : textAnswer(404, "not found: try /metrics\n"),
      logger,
    );
    try {
      await listener.listen();
    } catch (error) {
      throw new RmqStorageError(
        ErrorCode.INVALID_OPTION,
        `invalid option metrics: cannot listen on ${endpoint.host}:${endpoint.port} (${(error as Error).message})`,
        { cause: error },
      );
    }
    logger.info(listener.address(), "serving metrics");
    return listener;
  }

  /** The address of the metrics listener and its actual port (useful with `port: 0`); `undefined` without `metrics`. */
  metricsAddress(): { host: string; port: number } | undefined {
    return this.#metrics?.address();
  }

  /**
   * The names of the server's broker connections, one per process (`x-rmq-storage <host> pid <pid> ranges
   * <ranges>[ standby]`), as `x-rmq-storage stats` shows the active consumer of each queue.
   */
  connectionNames(): string[] {
    return this.#group?.names ?? [this.#name];
  }

  async #start(): Promise<void> {
    const { storage, logger } = this.#options;
    try {
      this.#storage = typeof storage === "string" ? await openStorage(storage, logger) : await storage();
    } catch (error) {
      throw XError.is(error) ? error : backendError("the storage factory failed", error);
    }
    const queues = this.#servedQueues();
    const writes = new InFlightWindow(this.#options.maxConcurrentWrites);
    for (const [queue, spec] of queues)
      this.#workers.set(
        spec.name,
        new QueueWorker(spec, queue, {
          storage: this.#storage,
          maxItemsPerWrite: this.#options.maxItemsPerWrite,
          writes,
          logger,
          emit: (event, ...payload) =>
            (this.emit as (e: string, ...p: unknown[]) => boolean)(event, ...payload),
          isOpen: (channel) => channel === this.#channel,
        }),
      );
    try {
      await this.#connect(this.#options.connectTimeoutMs);
    } catch (error) {
      await this.#storage.close().catch(() => {});
      throw error;
    }
    logger.info(
      {
        url: redactUrls(this.#options.url),
        queues: queues.size,
        queueType: this.#options.queueType,
        ranges: formatRanges(this.#options.ranges),
        standby: this.#options.standbyWaitMs > 0,
      },
      "serving",
    );
  }

  async #connect(timeoutMs: number): Promise<void> {
    const { url, heartbeatMs, prefetch, logger } = this.#options;
    const connection = await connectBroker({
      url,
      first: this.#turn,
      heartbeatMs,
      timeoutMs,
      signal: this.#reconnecting.signal,
      name: this.#name,
      logger,
    });
    try {
      connection.on("error", (error) => logger.warn({ err: error }, "broker connection error"));
      const queues = workerQueues.filter((spec) => this.#options.ranges.includes(spec.range));
      await declareTopology(connection, this.#top, queues, this.#queueKind());
      const channel = await connection.createChannel();
      channel.on("error", (error) => logger.warn({ err: error }, "broker channel error"));
      await channel.prefetch(prefetch, false);
      this.#connection = connection;
      this.#channel = channel;
      // Losses during the setup fail the setup (the caller retries); afterwards they start a reconnect.
      let ready = false;
      let closed = false;
      const onClose = () => {
        closed = true;
        if (ready) this.#lost(connection, channel);
      };
      channel.once("close", onClose);
      connection.once("close", onClose);
      const consume = async (spec: QueueSpec) => {
        const worker = this.#workers.get(spec.name) as QueueWorker;
        const queue = this.#top.queue(spec);
        const { consumerTag } = await channel.consume(
          queue,
          (message) => {
            if (message === null) this.#lost(connection, channel);
            else worker.receive(channel, message);
          },
          { consumerTag: `${this.#name} ${queue}` },
        );
        return consumerTag;
      };
      this.#consumers =
        this.#options.standbyWaitMs > 0
          ? await this.#standBy(channel, queues, consume)
          : await Promise.all(queues.map(consume));
      ready = true;
      if (closed) this.#lost(connection, channel);
    } catch (error) {
      if (this.#connection === connection) {
        this.#channel = undefined;
        this.#connection = undefined;
      }
      await connection.close().catch(() => {});
      throw error;
    }
  }

  /**
   * A standby's registration: each queue's consumer once the queue has one (the active server's), the rest
   * when `standbyWaitMs` has passed. Looks every 200 ms.
   */
  async #standBy(
    channel: Channel,
    queues: readonly QueueSpec[],
    consume: (spec: QueueSpec) => Promise<string>,
  ): Promise<string[]> {
    const deadline = performance.now() + this.#options.standbyWaitMs;
    const tags: string[] = [];
    let waiting = [...queues];
    for (;;) {
      const late = performance.now() >= deadline;
      const counts = await Promise.all(
        waiting.map(async (spec) => (await channel.checkQueue(this.#top.queue(spec))).consumerCount),
      );
      const now = waiting.filter((_, i) => late || (counts[i] as number) > 0);
      tags.push(...(await Promise.all(now.map(consume))));
      waiting = waiting.filter((spec) => !now.includes(spec));
      if (waiting.length === 0) return tags;
      if (late) continue;
      await sleep(Math.min(200, Math.max(0, deadline - performance.now())), {
        signal: this.#reconnecting.signal,
      });
    }
  }

  /** The kind of queues this server declares. */
  #queueKind(): QueueKind {
    const { queueType, deliveryLimit } = this.#options;
    return queueType === "quorum"
      ? { type: "quorum", deliveryLimit: deliveryLimit ?? DEFAULT_DELIVERY_LIMIT }
      : { type: "classic" };
  }

  #lost(connection: ChannelModel, channel: Channel): void {
    if (this.#channel !== channel) return;
    this.#turn++;
    this.#channel = undefined;
    this.#connection = undefined;
    for (const worker of this.#workers.values()) worker.forget(channel);
    connection.close().catch(() => {});
    if (this.#stopped) return;
    this.#options.logger.warn("broker connection lost; reconnecting");
    void this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    const backoff = reconnectBackoff();
    const signal = this.#reconnecting.signal;
    while (!signal.aborted) {
      const delayMs = backoff.next();
      this.emit("reconnect", { attempt: backoff.attempt, delayMs });
      try {
        await sleep(delayMs, { signal });
        await this.#connect(Math.max(1_000, delayMs));
        this.#options.logger.info("reconnected");
        return;
      } catch (error) {
        if (signal.aborted) return;
        this.#options.logger.warn({ err: error }, "reconnect failed");
      }
    }
  }

  /**
   * Stops gracefully; idempotent. Cancels the consumers (a standby takes over at once), finishes the
   * batches in flight (commit, reply, acknowledge), returns the deliveries not started to their queues,
   * then closes the connection and the storage.
   */
  stop(): Promise<void> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<void> {
    try {
      await (this.#group ? this.#group.stop() : this.#stopHere());
    } finally {
      await this.#metrics?.close();
    }
  }

  async #stopHere(): Promise<void> {
    this.#reconnecting.abort();
    const channel = this.#channel;
    if (channel) await Promise.all(this.#consumers.map((tag) => channel.cancel(tag).catch(() => {})));
    await Promise.all([...this.#workers.values()].map((worker) => worker.stop()));
    this.#channel = undefined;
    await channel?.close().catch(() => {});
    await this.#connection?.close().catch(() => {});
    await this.#storage?.close();
    this.#options.logger.info("stopped");
  }

  /** Same as {@link stop}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

/**
 * The management API the metrics read, or `undefined` (with a warning) for an `amqp://` broker on another host
 * without an explicit `management`, whose default address would carry the password in clear.
 *
 * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` for an explicit `management` that is not an http(s) URL
 */
function metricsManagement(
  url: string,
  management: string | undefined,
  logger: Logger,
): ManagementApi | undefined {
  try {
    return managementApi(url, managementBase(url, management));
  } catch (error) {
    if (management !== undefined) throw error;
    logger.warn(
      "metrics: x_rmq_storage_queue_active is left out: give the management API's URL (metrics.management, --management) for an amqp:// broker on another host",
    );
    return undefined;
  }
}
