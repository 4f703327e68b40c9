import type { Channel, ChannelModel } from "amqplib";
import { ErrorCode, RmqStorageError } from "./errors.js";
import { exchangeBindings, type QueueSpec, workerQueues } from "./routing.js";

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

/**
 * How the worker and dead-letter queues are declared: classic queues on one node, or quorum queues (Raft,
 * replicated on the nodes of a cluster) whose messages dead-letter after `deliveryLimit` failed deliveries.
 */
export type QueueKind = { type: "classic" } | { type: "quorum"; deliveryLimit: number };

/** Classic queues: what a single broker needs, and the default. */
export const CLASSIC: QueueKind = { type: "classic" };

/** The arguments every worker queue is declared with. */
export function queueArguments(
  top: Topology,
  spec: QueueSpec,
  kind: QueueKind = CLASSIC,
): Record<string, unknown> {
  const common = {
    "x-single-active-consumer": true,
    "x-dead-letter-exchange": `${top.exchange(spec.exchange)}.dead`,
  };
  if (kind.type === "classic") return common;
  return {
    ...common,
    "x-queue-type": "quorum",
    "x-delivery-limit": kind.deliveryLimit,
    // Dead-letter with publisher confirms (RabbitMQ ≥ 3.10): a dead-lettered message is kept until the
    // dead-letter queue has it, rather than dropped if that queue is unavailable at the moment.
    "x-dead-letter-strategy": "at-least-once",
    "x-overflow": "reject-publish",
  };
}

/** The arguments a dead-letter queue is declared with. */
export function deadQueueArguments(kind: QueueKind = CLASSIC): Record<string, unknown> {
  return kind.type === "classic" ? {} : { "x-queue-type": "quorum" };
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
 * queues of `queues` with their bindings, all of `kind`.
 *
 * @throws `ERR_X_RMQ_STORAGE_TOPOLOGY` naming an exchange or queue that exists with other arguments
 */
export async function declareTopology(
  connection: ChannelModel,
  top: Topology,
  queues: readonly QueueSpec[] = workerQueues,
  kind: QueueKind = CLASSIC,
) {
  await declareExchanges(connection, top);
  const steps: Array<[string, (channel: Channel) => Promise<unknown>]> = [];
  for (const name of Object.keys(exchangeBindings)) {
    const dead = `${top.exchange(name)}.dead`;
    steps.push([`exchange ${dead}`, (channel) => channel.assertExchange(dead, "fanout", { durable: true })]);
    steps.push([
      `queue ${dead}`,
      (channel) => channel.assertQueue(dead, { durable: true, arguments: deadQueueArguments(kind) }),
    ]);
    steps.push([`binding ${dead}`, (channel) => channel.bindQueue(dead, dead, "")]);
  }
  for (const spec of queues) {
    const name = top.queue(spec);
    steps.push([
      `queue ${name}`,
      (channel) => channel.assertQueue(name, { durable: true, arguments: queueArguments(top, spec, kind) }),
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
