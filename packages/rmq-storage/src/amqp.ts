import { Backoff, type Logger, sleep } from "@x/core";
import { redactUrl } from "@x/core/internal";
import amqp, { type Channel, type ChannelModel } from "amqplib";
import { classifyConnectFailure } from "./connect-failure.js";
import { ErrorCode, RmqStorageError } from "./errors.js";
import { exchangeBindings, type QueueSpec, workerQueues } from "./routing.js";

/** The reconnect backoff of the client and the server: 100 ms, ×2, at most 5 s, ±20 %. */
export const reconnectBackoff = () => new Backoff({ initialMs: 100, factor: 2, maxMs: 5_000, jitter: 0.2 });

/** How to reach the broker. */
export interface ConnectOptions {
  url: string;
  /** Heartbeat interval, in ms; 0 disables heartbeats, others are rounded up to whole seconds. */
  heartbeatMs: number;
  /** Give up after this long, in ms. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** The connection's name on the broker (`connection_name`: the management UI, `rabbitmqctl`, `stats`). */
  name?: string | undefined;
  /** Where each failed attempt is logged, with its reason. Default: silent. */
  logger?: Logger | undefined;
}

/**
 * How long an address may keep refusing connections (or its host name fail to resolve) before a first
 * connection gives up with `ERR_X_RMQ_STORAGE_UNREACHABLE`, in ms: room for a broker that is restarting, short
 * enough that a wrong address fails within a few seconds.
 */
export const UNAVAILABLE_GRACE_MS = 3_000;

/**
 * Connects to the broker, retrying with the reconnect backoff until `timeoutMs` has passed. Each failed
 * attempt is logged with its reason. A refusal by the broker (login, virtual host, TLS certificate) ends at
 * once; an address where nothing answers ends after {@link UNAVAILABLE_GRACE_MS}.
 *
 * @throws `ERR_X_RMQ_STORAGE_ACCESS_REFUSED`, `ERR_X_RMQ_STORAGE_UNREACHABLE`, or `ERR_X_RMQ_STORAGE_CONNECT`
 *   when no connection could be made in time (or the signal aborted); each message ends with the reason
 */
export async function connectBroker(options: ConnectOptions): Promise<ChannelModel> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const backoff = reconnectBackoff();
  const url = new URL(options.url);
  const shown = redactUrl(options.url);
  // AMQP negotiates heartbeats in whole seconds; 0 disables them.
  if (!url.searchParams.has("heartbeat"))
    url.searchParams.set("heartbeat", String(Math.ceil(options.heartbeatMs / 1_000)));
  /** When the address started to answer "nothing here" without a break. */
  let unavailableSince: number | undefined;
  for (;;) {
    const left = deadline - Date.now();
    try {
      options.signal?.throwIfAborted();
      return await amqp.connect(url.toString(), {
        timeout: Math.max(100, left),
        noDelay: true,
        ...(options.name === undefined ? {} : { clientProperties: { connection_name: options.name } }),
      });
    } catch (cause) {
      if (options.signal?.aborted)
        throw new RmqStorageError(ErrorCode.CONNECT, `connecting to RabbitMQ at ${shown} was aborted`, {
          cause,
        });
      const failure = classifyConnectFailure(cause, options.url);
      if (failure.kind === "config")
        throw new RmqStorageError(
          ErrorCode.ACCESS_REFUSED,
          `cannot connect to RabbitMQ at ${shown}: ${failure.reason}`,
          { cause },
        );
      unavailableSince = failure.kind === "unavailable" ? (unavailableSince ?? Date.now()) : undefined;
      const delayMs = backoff.next();
      const next = Date.now() + delayMs;
      if (
        unavailableSince !== undefined &&
        (next >= deadline || next - unavailableSince > UNAVAILABLE_GRACE_MS)
      )
        throw new RmqStorageError(
          ErrorCode.UNREACHABLE,
          `cannot connect to RabbitMQ at ${shown}: ${failure.reason}`,
          { cause },
        );
      if (next >= deadline)
        throw new RmqStorageError(
          ErrorCode.CONNECT,
          `cannot connect to RabbitMQ at ${shown} within ${options.timeoutMs} ms: ${failure.reason}`,
          { cause },
        );
      options.logger?.warn(
        { url: shown, attempt: backoff.attempt, reason: failure.reason, retryInMs: Math.round(delayMs) },
        "cannot connect to RabbitMQ yet; retrying",
      );
      await sleep(delayMs, { signal: options.signal }).catch(() => {});
    }
  }
}

/** Names of a topology: the exchange and queue names of swh-provenance, each with an optional prefix (for tests and for several tenants on one broker). */
export interface Topology {
  prefix: string;
  exchange(name: string): string;
  queue(spec: QueueSpec): string;
}

/** What separates a non-empty prefix from the names it qualifies: `tenant1` names `tenant1.content`. */
export const PREFIX_SEPARATOR = ".";

/**
 * The topology with `prefix` and {@link PREFIX_SEPARATOR} in front of every exchange and queue name
 * (routing keys are unchanged). A prefix that already ends with the separator gets no second one, and the
 * empty prefix gives the names of swh-provenance.
 */
export function topology(prefix: string): Topology {
  const head = prefix === "" || prefix.endsWith(PREFIX_SEPARATOR) ? prefix : prefix + PREFIX_SEPARATOR;
  return { prefix, exchange: (name) => head + name, queue: (spec) => head + spec.name };
}

/** The arguments every worker queue is declared with. */
export function queueArguments(top: Topology, spec: QueueSpec): Record<string, unknown> {
  return {
    "x-single-active-consumer": true,
    "x-dead-letter-exchange": `${top.exchange(spec.exchange)}.dead`,
  };
}

async function declareAll(
  connection: ChannelModel,
  steps: Array<[string, (channel: Channel) => Promise<unknown>]>,
) {
  const channel = await connection.createChannel();
  channel.on("error", () => {});
  const results = await Promise.allSettled(steps.map(([, step]) => step(channel)));
  const failed = results.findIndex(
    (r) => r.status === "rejected" && /PRECONDITION_FAILED/.test(String(r.reason)),
  );
  const first = failed >= 0 ? failed : results.findIndex((r) => r.status === "rejected");
  if (first >= 0) {
    const reason = (results[first] as PromiseRejectedResult).reason;
    const name = steps[first]?.[0];
    if (/PRECONDITION_FAILED/.test(String(reason)))
      throw new RmqStorageError(
        ErrorCode.TOPOLOGY,
        `${name} already exists with other arguments: ${String(reason)}`,
        {
          cause: reason,
        },
      );
    throw reason;
  }
  await channel.close();
}

/** Declares the five durable direct exchanges (what a client needs to publish). */
export function declareExchanges(connection: ChannelModel, top: Topology): Promise<void> {
  return declareAll(
    connection,
    Object.keys(exchangeBindings).map((name) => [
      `exchange ${top.exchange(name)}`,
      (channel) => channel.assertExchange(top.exchange(name), "direct", { durable: true }),
    ]),
  );
}

/**
 * Declares the whole topology: the exchanges, the dead-letter fanout exchanges and queues, and the worker
 * queues of `queues` with their bindings.
 *
 * @throws `ERR_X_RMQ_STORAGE_TOPOLOGY` naming an exchange or queue that exists with other arguments
 */
export async function declareTopology(
  connection: ChannelModel,
  top: Topology,
  queues: readonly QueueSpec[] = workerQueues,
) {
  await declareExchanges(connection, top);
  const steps: Array<[string, (channel: Channel) => Promise<unknown>]> = [];
  for (const name of Object.keys(exchangeBindings)) {
    const dead = `${top.exchange(name)}.dead`;
    steps.push([`exchange ${dead}`, (channel) => channel.assertExchange(dead, "fanout", { durable: true })]);
    steps.push([`queue ${dead}`, (channel) => channel.assertQueue(dead, { durable: true })]);
    steps.push([`binding ${dead}`, (channel) => channel.bindQueue(dead, dead, "")]);
  }
  for (const spec of queues) {
    const name = top.queue(spec);
    steps.push([
      `queue ${name}`,
      (channel) => channel.assertQueue(name, { durable: true, arguments: queueArguments(top, spec) }),
    ]);
    steps.push([
      `binding ${name}`,
      (channel) => channel.bindQueue(name, top.exchange(spec.exchange), spec.name),
    ]);
  }
  await declareAll(connection, steps);
}

/** Every exchange and queue name of a topology (for `stats` and for cleaning up). */
export function topologyNames(top: Topology): {
  exchanges: string[];
  queues: string[];
  deadQueues: string[];
} {
  const exchanges = Object.keys(exchangeBindings).map((name) => top.exchange(name));
  return {
    exchanges: [...exchanges, ...exchanges.map((name) => `${name}.dead`)],
    queues: workerQueues.map((spec) => top.queue(spec)),
    deadQueues: exchanges.map((name) => `${name}.dead`),
  };
}

/**
 * Runs a passive check (`checkQueue`, `checkExchange`) for each name, one after another, and returns the
 * results of the names that exist. A missing name closes the channel (404), so another one is opened.
 */
export async function checkEach<T>(
  connection: ChannelModel,
  names: readonly string[],
  check: (channel: Channel, name: string) => Promise<T>,
): Promise<Map<string, T>> {
  const out = new Map<string, T>();
  const open = async () => {
    const channel = await connection.createChannel();
    channel.on("error", () => {});
    return channel;
  };
  let channel = await open();
  for (const name of names) {
    try {
      out.set(name, await check(channel, name));
    } catch {
      channel = await open();
    }
  }
  await channel.close().catch(() => {});
  return out;
}

/**
 * The first of `names` that does not exist or has no consumer, checked in order with passive declares on a
 * channel of its own; `undefined` when every queue has a consumer.
 */
export async function firstQueueWithoutConsumer(
  connection: ChannelModel,
  names: readonly string[],
): Promise<string | undefined> {
  const channel = await connection.createChannel();
  channel.on("error", () => {});
  try {
    for (const name of names) {
      const consumers = await channel.checkQueue(name).then(
        (ok) => ok.consumerCount,
        () => 0,
      );
      if (consumers === 0) return name;
    }
    return undefined;
  } finally {
    await channel.close().catch(() => {});
  }
}
