// Consumer groups: records per second through 1, 2 and 3 members of a group, each member the adapter's group
// stream on its own connection with a checkpoint pulse per record, beside the same number of members of the
// raw client's group consumer doing the same checkpoint work: on Redis `XREADGROUP` of 500 and `XACK` per
// batch; on NATS a fetch of 500 from one shared durable pull consumer, each message acknowledged. One JSON
// line per engine and member count. The members run in one process, as async loops, so the figures compare
// the adapter with the raw client rather than measure how a group scales over hosts. Each pair runs RUNS
// times, alternating; the figures are medians.
// Run: pnpm --filter @x/checkpoint bench:groups (Redis and NATS as `pnpm services` starts them);
// BENCH_ENGINES=redis,nats picks engines, BENCH_RECORDS sets the count (default 100 000), BENCH_RUNS the runs
// (default 3).
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect as natsConnect } from "@nats-io/transport-node";
import { Checkpoint, Dependency } from "@x/checkpoint";
import { natsStream } from "@x/checkpoint/nats";
import { redisStream } from "@x/checkpoint/redis";
import { createClient } from "redis";
import { addRedisEntries, publishNatsMessages } from "../test/indexed-records.js";

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const NATS_SERVER = process.env.NATS_SERVER ?? "127.0.0.1:4222";
const BATCH = 500;
/** What NATS members fetch at a time. */
const NATS_BATCH = Number(process.env.BENCH_NATS_BATCH ?? 100);
const T0 = Date.UTC(2025, 0, 1);
const tag = `bench_groups_${process.pid}_${Date.now().toString(36)}`;

/** One engine holding RECORDS records `{ i }`, and how its members consume them. */
interface GroupEngine {
  name: string;
  /** A fresh group at the first record, created for the raw client's members (the adapter creates its own). */
  newGroup(through: "adapter" | "raw"): Promise<string>;
  dropGroup(group: string): Promise<void>;
  /** A member through the adapter, until `done()` says the group handled every record or it is closed. */
  adapterMember(group: string, name: string, done: () => boolean): Promise<void>;
  /** A member with the raw client alone, doing the same checkpoint work. */
  rawMember(group: string, name: string, done: () => boolean): Promise<void>;
  cleanup(): Promise<void>;
}

/** A member's checkpoint, its dependency always ahead; `dependent` is what it pauses. */
function memberCheckpoint(dependent: unknown): Checkpoint {
  return new Checkpoint("bench", {
    dependent,
    dependencies: [new Dependency("prices", { downtimeThresholdMs: 100_000 })],
  });
}

/** Records each member's checkpoint pulsed, for its heartbeats. */
const pulses = new WeakMap<Checkpoint, number>();

/**
 * The checkpoint's work for one record: a pulse, and a heartbeat of the dependency every 10 of the member's
 * own records, 1 000 s of event time ahead. A member sees only some of the records (the others go to other
 * members), so a heartbeat every 50 records of the stream, as in `bench:engines`, would leave a member's
 * records more than the threshold ahead of its last heartbeat: a downtime that pauses the group for ever,
 * since the heartbeats come with the records.
 */
async function pulse(checkpoint: Checkpoint, index: number, position: unknown): Promise<void> {
  const count = pulses.get(checkpoint) ?? 0;
  pulses.set(checkpoint, count + 1);
  if (count % 10 === 0) await checkpoint.heartbeat(new Date(T0 + (index + 1_000) * 1_000));
  await checkpoint.checkPulse(new Date(T0 + index * 1_000), { position });
}

/** The adapter's members of the run under way: the first to see the end closes them all. */
const streams: Array<{ close(): Promise<void> }> = [];
/** Set when the members of the run under way have handled every record. */
let finished = false;

/** Reads `stream` as a member, until the group has handled every record. */
async function throughAdapter<R>(
  stream: AsyncIterable<R> & { close(): Promise<void>; position: unknown },
  indexOf: (record: R) => number,
  done: () => boolean,
): Promise<void> {
  streams.push(stream);
  // a member that connected after the others finished has nothing left to read
  if (finished) await stream.close();
  const checkpoint = memberCheckpoint(stream);
  for await (const record of stream) {
    await pulse(checkpoint, indexOf(record), stream.position);
    if (done()) {
      finished = true;
      await Promise.all(streams.splice(0).map((member) => member.close()));
    }
  }
}

async function redisEngine(): Promise<GroupEngine> {
  const admin = await createClient({ url: REDIS_URL }).connect();
  const key = `${tag}_orders`;
  await addRedisEntries(admin, key, RECORDS);
  let groups = 0;
  return {
    name: "redis",
    async newGroup() {
      const group = `${tag}_g${groups++}`;
      await admin.sendCommand(["XGROUP", "CREATE", key, group, "0"]);
      return group;
    },
    async dropGroup(group) {
      await admin.sendCommand(["XGROUP", "DESTROY", key, group]);
    },
    adapterMember: (group, name, done) =>
      throughAdapter(
        redisStream({
          client: createClient({ url: REDIS_URL }),
          key,
          group: { name: group, consumer: name },
          batchSize: BATCH,
          blockMs: 50,
        }),
        (record) => Number(record.fields.i),
        done,
      ),
    async rawMember(group, name, done) {
      const client = await createClient({ url: REDIS_URL }).connect();
      const checkpoint = memberCheckpoint({ pause() {}, resume() {} });
      try {
        while (!finished) {
          const reply = await client.xReadGroup(group, name, { key, id: ">" }, { COUNT: BATCH, BLOCK: 50 });
          type Entries = Array<{ messages: Array<{ id: string; message: Record<string, string> }> }>;
          const messages = (reply as Entries | null)?.[0]?.messages ?? [];
          for (const message of messages) {
            await pulse(checkpoint, Number(message.message.i), message.id);
            if (done()) finished = true;
          }
          if (messages.length > 0)
            await client.xAck(
              key,
              group,
              messages.map((message) => message.id),
            );
        }
      } finally {
        client.destroy();
      }
    },
    async cleanup() {
      await admin.del(key);
      admin.destroy();
    },
  };
}

async function natsEngine(): Promise<GroupEngine> {
  const nc = await natsConnect({ servers: NATS_SERVER });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const stream = `${tag}_orders`.toUpperCase();
  const subject = `${stream.toLowerCase()}.created`;
  await jsm.streams.add({ name: stream, subjects: [subject], storage: "file" });
  await publishNatsMessages(js, subject, RECORDS);
  const member = () => natsConnect({ servers: NATS_SERVER });
  const members: Array<Awaited<ReturnType<typeof member>>> = [];
  let groups = 0;
  return {
    name: "nats",
    async newGroup(through) {
      const group = `g${groups++}`;
      if (through === "adapter") return group;
      await jsm.consumers.add(stream, {
        durable_name: group,
        ack_policy: AckPolicy.Explicit,
        ack_wait: 30_000_000_000,
      });
      return group;
    },
    async dropGroup(group) {
      await jsm.consumers.delete(stream, group);
      await jsm.streams.delete(`CHECKPOINT_${stream}_${group}`).catch(() => {}); // the adapter's flag stream
      await Promise.all(members.splice(0).map((connection) => connection.close()));
    },
    async adapterMember(group, name, done) {
      const connection = await member();
      members.push(connection);
      await throughAdapter(
        natsStream({
          js: jetstream(connection),
          stream,
          group: { name: group, consumer: name },
          batchSize: NATS_BATCH,
          pullExpiresMs: 1_000,
        }),
        (message) => (message.json() as { i: number }).i,
        done,
      );
    },
    async rawMember(group, _name, done) {
      const connection = await member();
      members.push(connection);
      const consumer = await jetstream(connection).consumers.get(stream, group);
      const checkpoint = memberCheckpoint({ pause() {}, resume() {} });
      while (!finished) {
        const messages = await consumer.fetch({ max_messages: NATS_BATCH, expires: 1_000 });
        for await (const message of messages) {
          await pulse(checkpoint, (message.json() as { i: number }).i, message.seq);
          message.ack();
          if (done()) finished = true;
        }
      }
    },
    async cleanup() {
      await jsm.streams.delete(stream);
      await nc.close();
    },
  };
}

/** Runs `members` members of a fresh group until the group has handled every record; the wall time in ms. */
async function run(engine: GroupEngine, members: number, through: "adapter" | "raw"): Promise<number> {
  const group = await engine.newGroup(through);
  finished = false;
  let handled = 0;
  const done = () => ++handled >= RECORDS;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: members }, (_, index) =>
      through === "adapter"
        ? engine.adapterMember(group, `m${index}`, done)
        : engine.rawMember(group, `m${index}`, done),
    ),
  );
  const ms = performance.now() - began;
  await engine.dropGroup(group);
  return ms;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const only = (process.env.BENCH_ENGINES ?? "redis,nats").split(",");
for (const open of [redisEngine, natsEngine]) {
  const name = open === redisEngine ? "redis" : "nats";
  if (!only.includes(name)) continue;
  const engine = await open();
  try {
    for (const members of [1, 2, 3]) {
      const adapterMs: number[] = [];
      const rawMs: number[] = [];
      for (let index = 0; index < RUNS; index++) {
        rawMs.push(await run(engine, members, "raw"));
        adapterMs.push(await run(engine, members, "adapter"));
      }
      console.log(
        JSON.stringify({
          bench: "group-throughput",
          engine: engine.name,
          members,
          records: RECORDS,
          runs: RUNS,
          recordsPerSec: Math.round((RECORDS / median(adapterMs)) * 1_000),
          rawGroupRecordsPerSec: Math.round((RECORDS / median(rawMs)) * 1_000),
          ratio: Number((median(rawMs) / median(adapterMs)).toFixed(3)),
        }),
      );
    }
  } finally {
    await engine.cleanup();
  }
}
