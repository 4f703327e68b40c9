// Consumer groups on Redis: records per second through 1, 2 and 3 members of a group, each member a
// `redisStream({ group })` with its own connection and a checkpoint pulse per record, beside the same number
// of members of a raw node-redis group consumer (`XREADGROUP` of 500, `XACK` per batch) doing the same
// checkpoint work. One JSON line per member count; the members run in one process, as async loops, so the
// figures compare the adapter with the raw client rather than measure how a group scales over hosts. Each
// pair runs RUNS times, alternating; the figures are medians.
// Run: pnpm --filter @x/checkpoint bench:groups (Redis as `pnpm services` starts it); BENCH_RECORDS sets
// the count (default 100 000), BENCH_RUNS the runs (default 3).
import { Checkpoint, Dependency } from "@x/checkpoint";
import { redisStream } from "@x/checkpoint/redis";
import { createClient } from "redis";

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const BATCH = 500;
const T0 = Date.UTC(2025, 0, 1);
const tag = `bench_groups_${process.pid}_${Date.now().toString(36)}`;

const admin = await createClient({ url: REDIS_URL }).connect();
const key = `${tag}_orders`;
for (let from = 0; from < RECORDS; from += 1_000) {
  const writes = [];
  for (let index = from; index < Math.min(RECORDS, from + 1_000); index++)
    writes.push(admin.xAdd(key, "*", { i: String(index) }));
  await Promise.all(writes);
}

/** A member's checkpoint, its dependency always ahead; `dependent` is what it pauses. */
function memberCheckpoint(dependent: unknown): Checkpoint {
  return new Checkpoint("bench", {
    dependent,
    dependencies: [new Dependency("prices", { downtimeThresholdMs: 100_000 })],
  });
}

async function pulse(checkpoint: Checkpoint, index: number, id: string): Promise<void> {
  if (index % 50 === 0) await checkpoint.heartbeat(new Date(T0 + (index + 50) * 1_000));
  await checkpoint.checkPulse(new Date(T0 + index * 1_000), { id });
}

let groupCount = 0;

/** Runs `members` members of a fresh group until the group has handled every record; the wall time in ms. */
async function run(
  members: number,
  member: (group: string, name: string, done: () => boolean) => Promise<void>,
) {
  const group = `${tag}_g${groupCount++}`;
  await admin.sendCommand(["XGROUP", "CREATE", key, group, "0"]);
  let handled = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: members }, (_, index) => member(group, `m${index}`, () => ++handled >= RECORDS)),
  );
  const ms = performance.now() - began;
  await admin.sendCommand(["XGROUP", "DESTROY", key, group]);
  return ms;
}

/** The adapter's members of the run under way: the first to see the end closes them all. */
const streams: Array<ReturnType<typeof redisStream>> = [];

/** A member through the adapter: stops once the group has handled every record. */
async function adapterMember(group: string, name: string, done: () => boolean): Promise<void> {
  const stream = redisStream({
    client: createClient({ url: REDIS_URL }),
    key,
    group: { name: group, consumer: name },
    batchSize: BATCH,
    blockMs: 50,
  });
  streams.push(stream);
  const checkpoint = memberCheckpoint(stream);
  for await (const record of stream) {
    await pulse(checkpoint, Number(record.fields.i), record.id);
    if (done()) await Promise.all(streams.splice(0).map((member) => member.close()));
  }
}

/** Set when the raw members of the run under way have handled every record. */
let finished = false;

/** A member with node-redis alone: XREADGROUP, the same checkpoint work, XACK of the batch. */
async function rawMember(group: string, name: string, done: () => boolean): Promise<void> {
  const client = await createClient({ url: REDIS_URL }).connect();
  const checkpoint = memberCheckpoint({ pause() {}, resume() {} });
  try {
    while (!finished) {
      const reply = await client.xReadGroup(group, name, { key, id: ">" }, { COUNT: BATCH, BLOCK: 50 });
      const streams = reply as Array<{
        messages: Array<{ id: string; message: Record<string, string> }>;
      }> | null;
      const messages = streams?.[0]?.messages ?? [];
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
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

try {
  for (const members of [1, 2, 3]) {
    const adapterMs: number[] = [];
    const rawMs: number[] = [];
    for (let index = 0; index < RUNS; index++) {
      finished = false;
      rawMs.push(await run(members, rawMember));
      finished = false;
      adapterMs.push(await run(members, adapterMember));
    }
    console.log(
      JSON.stringify({
        bench: "group-throughput",
        engine: "redis",
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
  await admin.del(key);
  admin.destroy();
}
