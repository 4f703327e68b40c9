// Redis streams read as a consumer group: members share the entries, and a pause, a seek and a resume of one
// member are the whole group's. Several members in one process, each on its own connection.

import { setTimeout as delay } from "node:timers/promises";
import { requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { ErrorCode } from "../src/index.js";
import { idAt, type RedisStreamRecord, redisStream } from "../src/redis.js";
import { expectCode } from "./helpers.js";
import { addRedisEntries } from "./indexed-records.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
vi.setConfig({ testTimeout: 60_000 });

let admin: Awaited<ReturnType<typeof connect>>;

async function connect() {
  const client = createClient({ url: REDIS_URL });
  client.on("error", () => {});
  await client.connect();
  return client;
}

beforeAll(async () => {
  await requireService("Redis", REDIS_URL);
  admin = await connect();
});
afterAll(() => admin?.destroy());

/** A fresh stream of `count` entries `{ i }` and a group name; the stream and the group's keys go after the test. */
async function produce(count: number, from = 0): Promise<{ key: string; group: string }> {
  const key = uniqueName("orders");
  const group = uniqueName("pricing");
  onTestFinished(async () => {
    await admin.del([key, ...["paused", "downtime", "replay"].map((name) => `${key}:${group}:${name}`)]);
  });
  await add(key, count, from);
  return { key, group };
}

const add = (key: string, count: number, from = 0) => addRedisEntries(admin, key, count, from);

/** A member of `group` on its own connection, closed after the test. */
async function member(
  key: string,
  group: string,
  consumer: string,
  claimIdleMs = 30_000,
  pauseLeaseMs = 10_000,
) {
  const client = await connect();
  const stream = redisStream({
    client,
    key,
    group: { name: group, consumer, claimIdleMs, pauseLeaseMs },
    batchSize: 50,
    blockMs: 100,
  });
  onTestFinished(async () => {
    await stream.close();
    client.destroy();
  });
  return { stream, client };
}

/** Reads `stream` in the background, keeping every record's `i`, until the test ends. */
function consume(stream: AsyncIterable<RedisStreamRecord>) {
  const seen: number[] = [];
  void (async () => {
    for await (const record of stream) seen.push(Number(record.fields.i));
  })().catch(() => {});
  return seen;
}

describe("redisStream as a consumer group member", () => {
  it("shares the entries among the members: each handed out once, to one of them", async () => {
    const { key, group } = await produce(1_000);
    const a = consume((await member(key, group, "a")).stream);
    const b = consume((await member(key, group, "b")).stream);
    await waitFor(() => a.length + b.length >= 1_000, 20_000, "every entry handed out");
    const all = [...a, ...b].sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: 1_000 }, (_, index) => index));
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
  });

  it("a pause by one member stops every member at the broker, a member that joins too, until the resume", async () => {
    const { key, group } = await produce(100);
    const first = await member(key, group, "a");
    const second = await member(key, group, "b");
    const a = consume(first.stream);
    const b = consume(second.stream);
    await waitFor(() => a.length + b.length >= 100, 20_000, "the first entries");
    await first.stream.pause();
    await waitFor(() => second.stream.paused, 5_000, "the other member paused");
    const deliveredWhilePaused = first.stream.deliveries + second.stream.deliveries;
    const joiner = await member(key, group, "c");
    const c = consume(joiner.stream);
    await waitFor(() => joiner.stream.paused, 5_000, "the member that joined paused");
    await add(key, 100, 100);
    // several of the members' polls of the pause: nothing is delivered to anyone
    await delay(600);
    expect(first.stream.deliveries + second.stream.deliveries + joiner.stream.deliveries).toBe(
      deliveredWhilePaused,
    );
    expect(await admin.get(`${key}:${group}:paused`)).toMatch(/^a \d{4}-/);
    first.stream.resume();
    await waitFor(() => a.length + b.length + c.length >= 200, 20_000, "the entries added meanwhile");
    await waitFor(() => !second.stream.paused && !joiner.stream.paused, 5_000, "every member reading");
    expect([...a, ...b, ...c].sort((x, y) => x - y)).toEqual(
      Array.from({ length: 200 }, (_, index) => index),
    );
  });

  it("takes over the entries a dead member received and left unacknowledged", async () => {
    const { key, group } = await produce(120);
    const dying = await member(key, group, "dying", 300);
    const iterator = dying.stream[Symbol.asyncIterator]();
    await iterator.next(); // it received a batch of 50, handed one out, and dies
    dying.client.destroy();
    const survivor = consume((await member(key, group, "survivor", 300)).stream);
    await waitFor(() => new Set(survivor).size >= 119, 20_000, "the dead member's entries taken over");
    const pending = await admin.xPending(key, group);
    await waitFor(async () => (await admin.xPending(key, group)).pending === 0, 5_000, "nothing pending");
    expect(pending.pending).toBeLessThanOrEqual(50);
  });

  it("replays the group once from the earliest point its recovering members seek", async () => {
    const { key, group } = await produce(300);
    const first = await member(key, group, "a");
    const second = await member(key, group, "b");
    const a = consume(first.stream);
    const b = consume(second.stream);
    await waitFor(() => a.length + b.length >= 300, 20_000, "every entry handed out");
    const entries = (await admin.xRange(key, "-", "+")) ?? [];
    const ids = entries.map((entry) => entry.id);
    /** A member's pause is a replay point too: where it was (its pulse found the dependency down). */
    const replayFrom = (asked: number, at: string | undefined) =>
      at === undefined ? asked : Math.min(asked, ids.indexOf(at));
    const from = replayFrom(200, first.stream.position);
    await first.stream.pause();
    // both members recover: the later (or equal) point is no second replay
    await second.stream.seek(ids[200]!);
    await first.stream.seek(ids[250]!);
    first.stream.resume();
    second.stream.resume();
    await waitFor(() => a.length + b.length >= 600 - from, 20_000, "the replay");
    await delay(500); // any further replay would come within this time
    const counts = new Map<number, number>();
    for (const i of [...a, ...b]) counts.set(i, (counts.get(i) ?? 0) + 1);
    for (let index = 0; index < 300; index++) expect(counts.get(index)).toBe(index >= from ? 2 : 1);
    // a later downtime replays again, from its own point; a seek behind the last replay (a member that
    // restarted with the first downtime in its cache) does nothing
    const from2 = replayFrom(280, second.stream.position);
    await second.stream.pause();
    await first.stream.seek(ids[100]!);
    await second.stream.seek(ids[280]!);
    first.stream.resume();
    second.stream.resume();
    await waitFor(() => a.length + b.length >= 900 - from - from2, 20_000, "the second replay");
    await delay(500);
    expect(a.length + b.length).toBe(900 - from - from2);
    expect(idAt(new Date(1_700_000_000_123))).toBe("1700000000123-0");
  });

  it("keeps the group paused while a paused member lives, and not after the last one died", async () => {
    const { key, group } = await produce(100);
    const keeper = await member(key, group, "keeper", 30_000, 300);
    const other = await member(key, group, "other", 30_000, 300);
    const seen = consume(other.stream);
    await keeper.stream.pause();
    await waitFor(() => other.stream.paused, 5_000, "the other member paused");
    await delay(1_000); // more than three leases: the keeper renews the pause
    expect(seen).toHaveLength(0);
    expect(other.stream.paused).toBe(true);
    keeper.client.destroy(); // killed while paused: nobody renews it
    await waitFor(() => seen.length === 100, 10_000, "the other member reading again");
  });

  it("replays from where a member that died while the group was paused had stopped", async () => {
    const { key, group } = await produce(100);
    const dying = await member(key, group, "dying");
    const survivor = await member(key, group, "survivor");
    const entries = (await admin.xRange(key, "-", "+")) ?? [];
    const iterator = dying.stream[Symbol.asyncIterator]();
    for (let index = 0; index < 10; index++) await iterator.next(); // at entry 9, it finds the dependency down
    await dying.stream.pause();
    dying.client.destroy();
    const seen = consume(survivor.stream);
    // the survivor recovers from a later point of its own: the group still replays from entry 9
    await survivor.stream.pause();
    await survivor.stream.seek(entries[60]!.id);
    survivor.stream.resume();
    await waitFor(() => new Set(seen).size === 91, 10_000, "every entry from the dead member's point");
    expect(Math.min(...seen)).toBe(9);
  });

  it("refuses a group without a name or a member name", () => {
    const client = createClient({ url: REDIS_URL });
    expectCode(
      () => redisStream({ client, key: "k", group: { name: "", consumer: "a" } }),
      ErrorCode.INVALID_OPTION,
    );
    expectCode(
      () => redisStream({ client, key: "k", group: { name: "g" } as never }),
      ErrorCode.INVALID_OPTION,
    );
  });
});
