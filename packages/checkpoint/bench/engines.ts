// Benchmarks of the engine adapters against the real servers: one JSON line per figure and engine.
// - throughput: records/s through a checkpointed consumer (the adapter's stream, a pulse per record with its
//   position, a heartbeat of the dependency every 50 records, no cache) ÷ records/s of the raw client doing
//   the same checkpoint work (`ratio`, target ≥ 0.9), and ÷ records/s of the bare client without a checkpoint
//   (`ratioToBareClient`). After a warm-up of each, the three run 5 times, alternating, so that the load of a
//   shared machine weighs on all alike, each round starting with the next of the three, so that none
//   always pays for the garbage of the same one: the figures are medians (the ratios, of each run's
//   ratios). All decode each record's payload, as an application would, and every run opens the
//   connection it reads on (Redis, RabbitMQ: with Nagle's algorithm off, as the README advises), as the
//   adapter's run does;
// - stale: records handed out after the pulse that detected a stalled dependency, and deliveries from the
//   broker while paused (both targets 0);
// - replay: the time to process again every record from the checkpointed position after recovery.
// Run: pnpm --filter @x/checkpoint bench:engines (RabbitMQ, NATS and Redis as `pnpm services` starts them);
// BENCH_ENGINES=redis,nats picks engines, BENCH_RECORDS=100000 sets the count.
import { type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect as natsConnect } from "@nats-io/transport-node";
import { Checkpoint, Dependency } from "@x/checkpoint";
import { natsStream } from "@x/checkpoint/nats";
import { type AmqpStreamMessage, rabbitmqStream } from "@x/checkpoint/rabbitmq-stream";
import { type BrokerStream, redisStream } from "@x/checkpoint/redis";
import amqp from "amqplib";
import { createClient } from "redis";
import { addRedisEntries, publishNatsMessages } from "../test/indexed-records.js";

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
/** Alternating runs of each consumer; the figures are their medians. */
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const TARGET_RATIO = 0.9;
const AMQP_URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const NATS_SERVER = process.env.NATS_SERVER ?? "127.0.0.1:4222";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const T0 = Date.UTC(2025, 0, 1);
const timeOf = (index: number) => new Date(T0 + index * 1_000);
const THRESHOLD_MS = 100_000;
/** The dependency (a price stream) sends a price every 50 dependent records, 50 s of event time ahead. */
const PRICE_EVERY = 50;
const tag = `bench_${process.pid}_${Date.now().toString(36)}`;

/** The per-record work of a raw consumer; returns a promise only when it has to wait. */
type Work = (index: number, position: unknown) => Promise<void> | undefined;

/** One engine holding RECORDS records `{ i }`. */
interface Engine<R, P> {
  name: string;
  /**
   * Consumes every record with the client alone, calling `work(index, position)` for each, in order (a
   * checkpoint's pulse, or nothing for the bare client).
   */
  raw(work?: Work): Promise<void>;
  /** A stream from the first record. */
  stream(): BrokerStream<R, P>;
  indexOf(record: R): number;
  cleanup(): Promise<void>;
}

async function redisEngine(): Promise<Engine<{ id: string; fields: Record<string, string> }, string>> {
  const client = await createClient({ url: REDIS_URL }).connect();
  const key = `${tag}_orders`;
  await addRedisEntries(client, key, RECORDS);
  const readers: (typeof client)[] = [];
  return {
    name: "redis",
    async raw(work) {
      // a connection of its own, as the adapter's run has (XREAD BLOCK holds it)
      const reader = await client.duplicate().connect();
      let after = "0-0";
      for (let seen = 0; seen < RECORDS; ) {
        const reply = await reader.xRead({ key, id: after }, { COUNT: 500, BLOCK: 1_000 });
        const messages =
          (reply as { messages: { id: string; message: Record<string, string> }[] }[] | null)?.[0]
            ?.messages ?? [];
        for (const { id, message } of messages) {
          const waiting = work?.(Number(message.i), id);
          if (waiting) await waiting;
          seen++;
        }
        after = messages.at(-1)?.id ?? after;
      }
      reader.destroy();
    },
    stream() {
      const reader = client.duplicate();
      readers.push(reader);
      void reader.connect();
      return redisStream({ client: reader, key });
    },
    indexOf: (record) => Number(record.fields.i),
    async cleanup() {
      await client.del(key);
      for (const reader of readers) reader.destroy();
      client.destroy();
    },
  };
}

async function natsEngine(): Promise<Engine<JsMsg, number>> {
  const nc = await natsConnect({ servers: NATS_SERVER });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const name = `${tag}_orders`.toUpperCase();
  const subject = `${name.toLowerCase()}.created`;
  await jsm.streams.add({ name, subjects: [subject], storage: "file" });
  await publishNatsMessages(js, subject, RECORDS);
  return {
    name: "nats",
    async raw(work) {
      const consumer = await js.consumers.get(name, { deliver_policy: "all" });
      const messages = await consumer.consume({ max_messages: 500 });
      let seen = 0;
      for await (const message of messages) {
        const waiting = work?.((message.json() as { i: number }).i, message.seq);
        if (waiting) await waiting;
        if (++seen === RECORDS) break;
      }
    },
    stream: () => natsStream({ js, stream: name }),
    indexOf: (message) => (message.json() as { i: number }).i,
    async cleanup() {
      await jsm.streams.delete(name);
      await nc.close();
    },
  };
}

async function rabbitmqEngine(): Promise<Engine<AmqpStreamMessage, number>> {
  const connection = await amqp.connect(AMQP_URL);
  const queue = `${tag}_orders`;
  const confirms = await connection.createConfirmChannel();
  await confirms.assertQueue(queue, { durable: true, arguments: { "x-queue-type": "stream" } });
  for (let index = 0; index < RECORDS; index++) {
    confirms.sendToQueue(queue, Buffer.from(JSON.stringify({ i: index })));
    if (index % 10_000 === 9_999) await confirms.waitForConfirms();
  }
  await confirms.waitForConfirms();
  return {
    name: "rabbitmq-stream",
    async raw(work) {
      // a connection of its own, opened and closed in the run as the adapter's run does
      const consumer = await amqp.connect(AMQP_URL, { noDelay: true });
      const channel = await consumer.createChannel();
      await channel.prefetch(500);
      let seen = 0;
      // The work of each message runs after the work of the one before: a chain, as amqplib calls back at once.
      let chain: Promise<void> | undefined;
      await new Promise<void>((resolve) => {
        void channel.consume(
          queue,
          (message) => {
            if (!message) return;
            const { i } = JSON.parse(message.content.toString()) as { i: number };
            const offset = message.properties.headers?.["x-stream-offset"];
            if (chain) chain = chain.then(() => work?.(i, offset));
            else chain = work?.(i, offset);
            if (++seen % 250 === 0) channel.ack(message, true);
            if (seen === RECORDS) resolve();
          },
          { noAck: false, arguments: { "x-stream-offset": "first" } },
        );
      });
      await chain;
      await consumer.close();
    },
    stream: () => rabbitmqStream({ connect: () => amqp.connect(AMQP_URL, { noDelay: true }), queue }),
    indexOf: (message) => (JSON.parse((message.content as Buffer).toString()) as { i: number }).i,
    async cleanup() {
      await confirms.deleteQueue(queue);
      await connection.close();
    },
  };
}

/** A checkpoint whose dependency keeps up, over `dependent`. */
const benchCheckpoint = (dependent: unknown) =>
  new Checkpoint("bench", {
    dependent,
    dependencies: [new Dependency("prices", { downtimeThresholdMs: THRESHOLD_MS })],
  });

/** The checkpoint's work for one record: a heartbeat of the dependency every PRICE_EVERY records, a pulse. */
async function pulse(cp: Checkpoint, index: number, position: unknown): Promise<void> {
  if (index % PRICE_EVERY === 0) await cp.heartbeat(timeOf(index + PRICE_EVERY));
  await cp.checkPulse(timeOf(index), { position });
}

/** Consumes every record with the raw client and the same checkpoint work as {@link checkpointed}. */
function rawCheckpointed<R, P>(engine: Engine<R, P>): Promise<void> {
  const cp = benchCheckpoint({ pause() {}, resume() {} });
  return engine.raw((index, position) => pulse(cp, index, position));
}

/** Consumes every record through the adapter and a checkpoint whose dependency keeps up. */
async function checkpointed<R, P>(engine: Engine<R, P>): Promise<void> {
  const stream = engine.stream();
  const cp = benchCheckpoint(stream);
  for await (const record of stream) {
    const index = engine.indexOf(record);
    await pulse(cp, index, stream.position);
    if (index === RECORDS - 1) break;
  }
}

async function timeMs(run: () => Promise<void>): Promise<number> {
  const began = performance.now();
  await run();
  return performance.now() - began;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

/**
 * RUNS alternating runs of the bare client, the raw client with the checkpoint's work, and the adapter with
 * the same work, after a warm-up of each; medians of the times and of each run's ratios.
 */
async function alternating(engine: Engine<unknown, unknown>) {
  const runs = {
    bare: () => engine.raw(),
    raw: () => rawCheckpointed(engine),
    stream: () => checkpointed(engine),
  };
  for (const run of Object.values(runs)) await run();
  const ms = { bare: [] as number[], raw: [] as number[], stream: [] as number[] };
  const order = Object.entries(runs);
  for (let run = 0; run < RUNS; run++)
    // each round starts with the next consumer: none always follows the same one (and pays for its garbage)
    for (let step = 0; step < order.length; step++) {
      const [name, consume] = order[(run + step) % order.length] as [keyof typeof ms, () => Promise<void>];
      ms[name].push(await timeMs(consume));
    }
  const ratios = (base: number[]) => base.map((baseMs, run) => baseMs / (ms.stream[run] as number));
  return {
    bareMs: median(ms.bare),
    rawMs: median(ms.raw),
    checkpointedMs: median(ms.stream),
    ratio: median(ratios(ms.raw)),
    ratios: ratios(ms.raw).map((ratio) => round(ratio, 3)),
    ratioToBareClient: median(ratios(ms.bare)),
  };
}

/** The dependency stalls after record 0: counts stale records and paused deliveries, then times the replay. */
async function outage<R, P>(engine: Engine<R, P>) {
  const stream = engine.stream();
  let recovered = false;
  let downAt = -1;
  let staleRecords = 0;
  let deliveriesAtPause = 0;
  let replayStarted = 0;
  const cp = new Checkpoint("bench-outage", {
    dependent: stream,
    dependencies: [new Dependency("prices", { downtimeThresholdMs: THRESHOLD_MS })],
    recoveryCallback: (_cp, dep) => stream.seek((dep.checkpointState as { position: P }).position),
  });
  const down = new Promise<void>((resolve) =>
    cp.once("down", () => {
      deliveriesAtPause = stream.deliveries;
      resolve();
    }),
  );
  const loop = (async () => {
    let replayed = 0;
    for await (const record of stream) {
      const index = engine.indexOf(record);
      if (cp.dependency("prices").isDown) staleRecords++;
      if (recovered) replayed++;
      if (index === 0 || recovered) await cp.heartbeat(timeOf(index));
      await cp.checkPulse(timeOf(index), { position: stream.position });
      if (downAt < 0 && cp.dependency("prices").isDown) downAt = index;
      if (recovered && index === RECORDS - 1) return replayed;
    }
    return replayed;
  })();
  await down;
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const deliveriesWhilePaused = stream.deliveries - deliveriesAtPause;
  await cp.heartbeat(timeOf(1)); // a late price: snapshots the position at detection
  recovered = true;
  replayStarted = performance.now();
  await cp.heartbeat(timeOf(downAt + 1));
  const replayed = await loop;
  const replayMs = performance.now() - replayStarted;
  await stream.close();
  return { downAt, staleRecords, deliveriesWhilePaused, replayed, replayMs };
}

const round = (value: number, digits = 0) => Number(value.toFixed(digits));

const only = process.env.BENCH_ENGINES?.split(",");
const engines = { redis: redisEngine, nats: natsEngine, "rabbitmq-stream": rabbitmqEngine };
for (const [name, open] of Object.entries(engines)) {
  if (only && !only.includes(name)) continue;
  const engine = await (open as () => Promise<Engine<unknown, unknown>>)();
  try {
    const { bareMs, rawMs, checkpointedMs, ratio, ratios, ratioToBareClient } = await alternating(engine);
    console.log(
      JSON.stringify({
        bench: "engine-throughput",
        engine: engine.name,
        records: RECORDS,
        runs: RUNS,
        recordsPerSec: round((RECORDS / checkpointedMs) * 1_000),
        rawRecordsPerSec: round((RECORDS / rawMs) * 1_000),
        ratio: round(ratio, 3),
        ratios,
        targetRatio: TARGET_RATIO,
        targetMet: ratio >= TARGET_RATIO,
        bareClientRecordsPerSec: round((RECORDS / bareMs) * 1_000),
        ratioToBareClient: round(ratioToBareClient, 3),
      }),
    );
    const result = await outage(engine);
    console.log(
      JSON.stringify({
        bench: "engine-stale",
        engine: engine.name,
        detectedAtRecord: result.downAt,
        staleRecordsBeyondThreshold: result.staleRecords,
        deliveriesWhilePaused: result.deliveriesWhilePaused,
        target: 0,
      }),
    );
    console.log(
      JSON.stringify({
        bench: "engine-replay",
        engine: engine.name,
        records: result.replayed,
        replayMs: round(result.replayMs),
        recordsPerSec: round((result.replayed / result.replayMs) * 1_000),
      }),
    );
  } finally {
    await engine.cleanup();
  }
}
