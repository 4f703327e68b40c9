// Benchmarks of the engine adapters against the real servers: one JSON line per figure and engine.
// - throughput: records/s through a checkpointed consumer (the adapter's stream and a pulse per record, a
//   heartbeat of the dependency every 50 records, no cache) ÷ records/s of the same client consuming raw, measured in the same run after a warm-up
//   of each (best of 2 each); both decode each record's payload, as an application would;
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

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const AMQP_URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const NATS_SERVER = process.env.NATS_SERVER ?? "127.0.0.1:4222";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const T0 = Date.UTC(2025, 0, 1);
const timeOf = (index: number) => new Date(T0 + index * 1_000);
const THRESHOLD_MS = 100_000;
/** The dependency (a price stream) sends a price every 50 dependent records, 50 s of event time ahead. */
const PRICE_EVERY = 50;
const tag = `bench_${process.pid}_${Date.now().toString(36)}`;

/** One engine holding RECORDS records `{ i }`. */
interface Engine<R, P> {
  name: string;
  /** Consumes every record with the client alone. */
  raw(): Promise<void>;
  /** A stream from the first record. */
  stream(): BrokerStream<R, P>;
  indexOf(record: R): number;
  cleanup(): Promise<void>;
}

async function redisEngine(): Promise<Engine<{ id: string; fields: Record<string, string> }, string>> {
  const client = await createClient({ url: REDIS_URL }).connect();
  const key = `${tag}_orders`;
  for (let from = 0; from < RECORDS; from += 1_000) {
    const batch = [];
    for (let index = from; index < Math.min(RECORDS, from + 1_000); index++)
      batch.push(client.xAdd(key, "*", { i: String(index) }));
    await Promise.all(batch);
  }
  const readers: (typeof client)[] = [];
  return {
    name: "redis",
    async raw() {
      let after = "0-0";
      for (let seen = 0; seen < RECORDS; ) {
        const reply = await client.xRead({ key, id: after }, { COUNT: 500, BLOCK: 1_000 });
        const messages =
          (reply as { messages: { id: string; message: Record<string, string> }[] }[] | null)?.[0]
            ?.messages ?? [];
        for (const { message } of messages) if (Number(message.i) >= 0) seen++;
        after = messages.at(-1)?.id ?? after;
      }
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
  for (let from = 0; from < RECORDS; from += 1_000) {
    const batch = [];
    for (let index = from; index < Math.min(RECORDS, from + 1_000); index++)
      batch.push(js.publish(subject, JSON.stringify({ i: index })));
    await Promise.all(batch);
  }
  return {
    name: "nats",
    async raw() {
      const consumer = await js.consumers.get(name, { deliver_policy: "all" });
      const messages = await consumer.consume({ max_messages: 500 });
      let seen = 0;
      for await (const message of messages) {
        (message.json() as { i: number }).i;
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
    async raw() {
      const channel = await connection.createChannel();
      await channel.prefetch(500);
      let seen = 0;
      await new Promise<void>((resolve) => {
        void channel.consume(
          queue,
          (message) => {
            if (!message) return;
            JSON.parse(message.content.toString());
            if (++seen % 250 === 0) channel.ack(message, true);
            if (seen === RECORDS) resolve();
          },
          { noAck: false, arguments: { "x-stream-offset": "first" } },
        );
      });
      await channel.close();
    },
    stream: () => rabbitmqStream({ connect: () => amqp.connect(AMQP_URL), queue }),
    indexOf: (message) => (JSON.parse(Buffer.from(message.content).toString()) as { i: number }).i,
    async cleanup() {
      await confirms.deleteQueue(queue);
      await connection.close();
    },
  };
}

/** Consumes every record through the adapter and a checkpoint whose dependency keeps up. */
async function checkpointed<R, P>(engine: Engine<R, P>): Promise<void> {
  const stream = engine.stream();
  const cp = new Checkpoint("bench", {
    dependent: stream,
    dependencies: [new Dependency("prices", { downtimeThresholdMs: THRESHOLD_MS })],
  });
  for await (const record of stream) {
    const index = engine.indexOf(record);
    if (index % PRICE_EVERY === 0) await cp.heartbeat(timeOf(index + PRICE_EVERY));
    await cp.checkPulse(timeOf(index), { position: stream.position });
    if (index === RECORDS - 1) break;
  }
}

async function bestMs(run: () => Promise<void>, times: number): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < times; attempt++) {
    const began = performance.now();
    await run();
    best = Math.min(best, performance.now() - began);
  }
  return best;
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
    await engine.raw(); // warm-up
    await checkpointed(engine);
    const rawMs = await bestMs(() => engine.raw(), 2);
    const checkpointedMs = await bestMs(() => checkpointed(engine), 2);
    console.log(
      JSON.stringify({
        bench: "engine-throughput",
        engine: engine.name,
        records: RECORDS,
        recordsPerSec: round((RECORDS / checkpointedMs) * 1_000),
        rawRecordsPerSec: round((RECORDS / rawMs) * 1_000),
        ratio: round(rawMs / checkpointedMs, 3),
        targetRatio: 0.9,
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
