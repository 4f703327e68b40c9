// The broker side of a consumer-group member process (group-member.ts): its orders as a group member, its
// prices, and how it names a record for the check (group-run-check.ts compares ids `"<ms>-<seq>"`, so a
// JetStream sequence s is written `s-0`).
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { CheckpointCache } from "@x/checkpoint";
import { natsStream } from "@x/checkpoint/nats";
import { RedisCache, redisStream } from "@x/checkpoint/redis";
import { createClient } from "redis";
import type { BrokerStream } from "../src/engines/broker-stream.js";
import type { MemberConfig } from "./group-member.js";

/** One member's orders and prices on its broker. */
export interface MemberEngine<R, P> {
  /** The orders, read as a member of the group. */
  orders: BrokerStream<R, P>;
  /** The event times of the prices, in order. */
  prices: AsyncIterable<Date>;
  /** The checkpoint's cache; none keeps it in memory (the member is never restarted). */
  cache?: CheckpointCache;
  /** The order's event time. */
  timeOf(order: R): Date;
  /** A position as the check names it. */
  idOf(position: P): string;
}

/** Opens the member's engine that `config.engine` names. */
export async function openMemberEngine(config: MemberConfig): Promise<MemberEngine<unknown, unknown>> {
  const engine = config.engine === "redis" ? await redisEngine(config) : await natsEngine(config);
  return engine as MemberEngine<unknown, unknown>;
}

async function redisEngine(config: MemberConfig) {
  const { url, group, consumer, redeliverMs } = config;
  const orders = redisStream({
    client: createClient({ url }),
    key: config.orders,
    group: { name: group, consumer, claimIdleMs: redeliverMs },
    batchSize: config.batchSize,
  });
  const prices = redisStream({ client: createClient({ url }), key: config.prices });
  return {
    orders,
    prices: (async function* () {
      for await (const price of prices) yield price.time;
    })(),
    cache: new RedisCache({ client: await createClient({ url }).connect(), prefix: config.cachePrefix }),
    timeOf: (order: { time: Date }) => order.time,
    idOf: (id: string) => id,
  } satisfies MemberEngine<{ time: Date }, string>;
}

/** On NATS, each message's payload is `{ "t": <event time in ms> }`. */
async function natsEngine(config: MemberConfig) {
  const { group, consumer, redeliverMs } = config;
  const js = jetstream(await connect({ servers: config.url, maxReconnectAttempts: -1 }));
  const orders = natsStream({
    js,
    stream: config.orders,
    group: { name: group, consumer, ackWaitMs: redeliverMs },
    batchSize: config.batchSize,
  });
  const prices = natsStream({ js, stream: config.prices });
  const timeOf = (message: { json(): unknown }) => new Date((message.json() as { t: number }).t);
  return {
    orders,
    prices: (async function* () {
      for await (const price of prices) yield timeOf(price);
    })(),
    timeOf,
    idOf: (seq: number) => `${seq}-0`,
  } satisfies MemberEngine<{ json(): unknown }, number>;
}
