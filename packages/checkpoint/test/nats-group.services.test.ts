// A NATS JetStream stream read as a consumer group: members share one durable consumer, and a pause, a seek
// and a resume of one member are the whole group's. Several members in one process, each on its own
// connection.

import { setTimeout as delay } from "node:timers/promises";
import { type JetStreamManager, type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { ErrorCode } from "../src/index.js";
import { natsStream } from "../src/nats.js";
import { expectCode } from "./helpers.js";
import { publishNatsMessages } from "./indexed-records.js";

const NATS_SERVER = process.env.NATS_SERVER ?? "127.0.0.1:4222";
vi.setConfig({ testTimeout: 60_000 });

/** How long the members' pulls last: how soon an idle member sees another member's pause. */
const PULL_EXPIRES_MS = 1_000;

let admin: NatsConnection;
let jsm: JetStreamManager;

const open = () => connect({ servers: NATS_SERVER, maxReconnectAttempts: -1, reconnectTimeWait: 100 });

beforeAll(async () => {
  await requireService("NATS", `nats://${NATS_SERVER}`);
  admin = await open();
  jsm = await jetstreamManager(admin);
});
afterAll(() => admin?.close());

/** A fresh stream of `count` messages `{ i }` and a group name; the stream and the group's go after the test. */
async function produce(count: number): Promise<{ stream: string; subject: string; group: string }> {
  const stream = uniqueName("orders").toUpperCase();
  const subject = `${stream.toLowerCase()}.created`;
  const group = uniqueName("pricing");
  onTestFinished(async () => {
    await jsm.streams.delete(stream).catch(() => {});
    await jsm.streams.delete(`CHECKPOINT_${stream}_${group}`).catch(() => {});
  });
  await jsm.streams.add({ name: stream, subjects: [subject] });
  await add(subject, count);
  return { stream, subject, group };
}

const add = (subject: string, count: number, from = 0) =>
  publishNatsMessages(jetstream(admin), subject, count, from);

/** A member of `group` on its own connection, closed after the test. */
async function member(
  stream: string,
  group: string,
  consumer: string,
  ackWaitMs = 30_000,
  pauseLeaseMs = 10_000,
) {
  const nc = await open();
  const orders = natsStream({
    js: jetstream(nc),
    stream,
    group: { name: group, consumer, ackWaitMs, pauseLeaseMs },
    batchSize: 50,
    pullExpiresMs: PULL_EXPIRES_MS,
    retryMaxMs: 200,
  });
  onTestFinished(async () => {
    await orders.close();
    await nc.close();
  });
  return { stream: orders, nc };
}

/** Reads `stream` in the background, keeping every message's `i`, until the test ends. */
function consume(stream: AsyncIterable<JsMsg>) {
  const seen: number[] = [];
  void (async () => {
    for await (const message of stream) seen.push((message.json() as { i: number }).i);
  })().catch(() => {});
  return seen;
}

/** Waits until the group's consumer has no message delivered and unacknowledged. */
const settled = (stream: string, group: string) =>
  waitFor(
    async () => (await jsm.consumers.info(stream, group)).num_ack_pending === 0,
    10_000,
    "every handed-out message acknowledged",
  );

const range = (length: number) => Array.from({ length }, (_, index) => index);
const consumerNames = async (stream: string) =>
  (await jsm.consumers.list(stream).next()).map((info) => info.name);

describe("natsStream as a consumer group member", () => {
  it("shares the messages among the members: each handed out once, to one of them", async () => {
    const { stream, group } = await produce(1_000);
    const a = consume((await member(stream, group, "a")).stream);
    const b = consume((await member(stream, group, "b")).stream);
    await waitFor(() => a.length + b.length >= 1_000, 20_000, "every message handed out");
    expect([...a, ...b].sort((x, y) => x - y)).toEqual(range(1_000));
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    await waitFor(
      async () => (await jsm.consumers.info(stream, group)).num_ack_pending === 0,
      10_000,
      "every message acknowledged",
    );
  });

  it("a pause by one member stops every member at the server, a member that joins too, until the resume", async () => {
    const { stream, subject, group } = await produce(100);
    const first = await member(stream, group, "a");
    const second = await member(stream, group, "b");
    const a = consume(first.stream);
    const b = consume(second.stream);
    await waitFor(() => a.length + b.length >= 100, 20_000, "the first messages");
    await first.stream.pause();
    await waitFor(() => second.stream.paused, 10_000, "the other member paused");
    const deliveredWhilePaused = first.stream.deliveries + second.stream.deliveries;
    const joiner = await member(stream, group, "c");
    const c = consume(joiner.stream);
    await waitFor(() => joiner.stream.paused, 10_000, "the member that joined paused");
    await add(subject, 100, 100);
    await waitFor(
      async () => (await jsm.consumers.info(stream, group)).num_pending === 100,
      10_000,
      "the new messages pending on the server",
    );
    // several of the members' polls of the pause: nothing is delivered to anyone
    await delay(3 * PULL_EXPIRES_MS);
    const info = await jsm.consumers.info(stream, group);
    expect(info.num_pending).toBe(100);
    expect(info.num_ack_pending).toBe(0);
    expect(first.stream.deliveries + second.stream.deliveries + joiner.stream.deliveries).toBe(
      deliveredWhilePaused,
    );
    const flag = await jsm.streams.getMessage(`CHECKPOINT_${stream}_${group}`, {
      last_by_subj: `$CHECKPOINT.${stream}.${group}.paused`,
    });
    expect(flag?.json()).toMatchObject({ member: "a", time: expect.stringMatching(/^\d{4}-/) });
    first.stream.resume();
    await waitFor(() => a.length + b.length + c.length >= 200, 20_000, "the messages added meanwhile");
    await waitFor(() => !second.stream.paused && !joiner.stream.paused, 10_000, "every member reading");
    expect([...a, ...b, ...c].sort((x, y) => x - y)).toEqual(range(200));
  });

  it("redelivers to another member what a dead member received and left unacknowledged, after ack_wait", async () => {
    const { stream, group } = await produce(120);
    const dying = await member(stream, group, "dying", 1_000);
    const iterator = dying.stream[Symbol.asyncIterator]();
    await iterator.next(); // it received a batch of 50, handed one out, and dies without acknowledging
    await dying.nc.close();
    const survivor: number[] = [];
    let redelivered = 0;
    const { stream: orders } = await member(stream, group, "survivor", 1_000);
    void (async () => {
      for await (const message of orders) {
        survivor.push((message.json() as { i: number }).i);
        if (message.info.redelivered) redelivered++;
      }
    })().catch(() => {});
    await waitFor(() => new Set(survivor).size === 120, 20_000, "the dead member's messages redelivered");
    // the dead member's batch, the one it handed out included, and nothing else
    expect(redelivered).toBeGreaterThan(0);
    expect(redelivered).toBeLessThanOrEqual(50);
    const info = await waitFor(
      async () => {
        const current = await jsm.consumers.info(stream, group);
        return current.num_ack_pending === 0 && current.num_pending === 0 ? current : undefined;
      },
      10_000,
      "nothing pending",
    );
    expect(info.config.ack_wait).toBe(1_000_000_000);
  });

  it("replays the group once from the earliest point its recovering members seek", async () => {
    const { stream, group } = await produce(300);
    const first = await member(stream, group, "a");
    const second = await member(stream, group, "b");
    const a = consume(first.stream);
    const b = consume(second.stream);
    await waitFor(() => a.length + b.length >= 300, 20_000, "every message handed out");
    // the pausing member's last record is a replay point too (its pulse found the dependency down)
    const from = Math.min(200, (first.stream.position as number) - 1);
    await first.stream.pause();
    // every member stopped and acknowledged what it handed out (else the replay starts at the first
    // message nobody acknowledged, as for a dead member)
    await settled(stream, group);
    // both members recover: the later (or equal) point is no second replay; sequences are indices + 1
    await second.stream.seek(201);
    await first.stream.seek(251);
    first.stream.resume();
    second.stream.resume();
    await waitFor(() => a.length + b.length >= 600 - from, 20_000, "the replay");
    await delay(2 * PULL_EXPIRES_MS); // any further replay would come within this time
    const counts = new Map<number, number>();
    for (const i of [...a, ...b]) counts.set(i, (counts.get(i) ?? 0) + 1);
    for (let index = 0; index < 300; index++) expect(counts.get(index)).toBe(index >= from ? 2 : 1);
    // a later downtime replays again, from its own point; a seek behind the last replay (a member that
    // restarted with the first downtime in its cache) does nothing
    // (no position when it handed out nothing since its seek)
    const at = second.stream.position as number | undefined;
    const from2 = at === undefined ? 280 : Math.min(280, at - 1);
    await second.stream.pause();
    await settled(stream, group);
    await first.stream.seek(101);
    await second.stream.seek(281);
    first.stream.resume();
    second.stream.resume();
    await waitFor(() => a.length + b.length >= 900 - from - from2, 20_000, "the second replay");
    await delay(2 * PULL_EXPIRES_MS);
    expect(a.length + b.length).toBe(900 - from - from2);
    expect((await jsm.consumers.info(stream, group)).config.opt_start_seq).toBe(from2 + 1);
  });

  it("keeps the group paused while a paused member lives, and not after the last one died", async () => {
    const { stream, group } = await produce(100);
    const keeper = await member(stream, group, "keeper", 30_000, 300);
    const other = await member(stream, group, "other", 30_000, 300);
    await keeper.stream.next(); // creates the group; the message is handed out before the pause, not replayed
    await keeper.stream.pause();
    const seen = consume(other.stream);
    await waitFor(() => other.stream.paused, 10_000, "the other member paused");
    await delay(1_000); // more than three leases: the keeper renews the pause
    expect(seen).toHaveLength(0);
    expect(other.stream.paused).toBe(true);
    await keeper.nc.close(); // killed while paused: nobody renews it
    // no member recovered: the group replays from where the keeper was, its message included
    await waitFor(() => seen.length === 100, 10_000, "the other member reading again");
    expect(seen.sort((x, y) => x - y)).toEqual(range(100));
  });

  it("replays from where a member that died while the group was paused had stopped", async () => {
    const { stream, group } = await produce(100);
    const dying = await member(stream, group, "dying");
    const survivor = await member(stream, group, "survivor");
    const iterator = dying.stream[Symbol.asyncIterator]();
    for (let index = 0; index < 10; index++) await iterator.next(); // at 9 (sequence 10), it finds the dependency down
    await dying.stream.pause();
    await dying.nc.close();
    const seen = consume(survivor.stream);
    // the survivor recovers from a later point of its own (60, sequence 61): the group still replays from 9
    await survivor.stream.pause();
    await survivor.stream.seek(61);
    survivor.stream.resume();
    await waitFor(() => new Set(seen).size === 91, 10_000, "every message from the dead member's point");
    expect(Math.min(...seen)).toBe(9);
  });

  it("a replay keeps what a dead member received and never acknowledged, before the replay point", async () => {
    const { stream, group } = await produce(100);
    const dying = await member(stream, group, "dying");
    const iterator = dying.stream[Symbol.asyncIterator]();
    await iterator.next(); // it received 0–49, handed out 0, and dies without acknowledging any
    await dying.nc.close();
    const survivor = await member(stream, group, "survivor");
    const seen = consume(survivor.stream);
    await waitFor(() => seen.length >= 50, 10_000, "the messages nobody received");
    // recreating the consumer at 60 (sequence 61) would forget 0–49: the replay starts at 0
    await survivor.stream.pause();
    await survivor.stream.seek(61);
    survivor.stream.resume();
    await waitFor(() => new Set(seen).size === 100, 10_000, "the dead member's messages");
  });

  it("leaves only the group's durable consumer on the server after pauses, seeks and close", async () => {
    const { stream, group } = await produce(20);
    expect(await consumerNames(stream)).toEqual([]);
    const { stream: orders } = await member(stream, group, "a");
    for (let cycle = 0; cycle < 3; cycle++) {
      expect((await orders.next()).value?.seq).toBe(1 + cycle);
      expect(await consumerNames(stream)).toEqual([group]);
      await orders.pause(); // at that message: the group replays from it at least
      await orders.seek(1 + cycle);
      orders.resume();
      expect((await orders.next()).value?.seq).toBe(1 + cycle);
      expect(await consumerNames(stream)).toEqual([group]);
    }
    await orders.close();
    expect(await consumerNames(stream)).toEqual([group]);
    // deleting a group: its consumer and its own stream
    await jsm.consumers.delete(stream, group);
    await jsm.streams.delete(`CHECKPOINT_${stream}_${group}`);
    expect(await consumerNames(stream)).toEqual([]);
  });

  it("refuses a bad group, a missing stream, and a group stream name in use", async () => {
    const js = jetstream(admin);
    await expectCode(
      () => natsStream({ js, stream: "S", group: { name: "", consumer: "a" } }),
      ErrorCode.INVALID_OPTION,
    );
    await expectCode(
      () => natsStream({ js, stream: "S", group: { name: "a.b", consumer: "a" } }),
      ErrorCode.INVALID_OPTION,
    );
    await expectCode(
      () => natsStream({ js, stream: "S", group: { name: "g" } as never }),
      ErrorCode.INVALID_OPTION,
    );
    await expectCode(
      () => natsStream({ js, stream: "S", group: { name: "g", consumer: "a", ackWaitMs: 10 } }),
      ErrorCode.INVALID_OPTION,
    );
    await expectCode(
      () => natsStream({ js, stream: "S", group: { name: "g", consumer: "a", pauseLeaseMs: 10 } }),
      ErrorCode.INVALID_OPTION,
    );
    await expectCode(
      () => natsStream({ js, stream: "S", filterSubjects: ["a", "b"], group: { name: "g", consumer: "a" } }),
      ErrorCode.INVALID_OPTION,
    );
    await expectCode(
      () =>
        natsStream({
          js: { consumers: js.consumers } as never,
          stream: "S",
          group: { name: "g", consumer: "a" },
        }),
      ErrorCode.INVALID_OPTION,
    );
    const missing = natsStream({
      js,
      stream: uniqueName("none"),
      group: { name: uniqueName("pricing"), consumer: "a" },
    });
    onTestFinished(() => missing.close());
    await expectCode(() => missing.next(), ErrorCode.NOT_A_STREAM);
    // another stream and group whose names join into this group's stream name
    const { stream, group } = await produce(1);
    await jsm.streams.add({ name: `CHECKPOINT_${stream}_${group}`, subjects: [`${group}.other`] });
    const { stream: clashing } = await member(stream, group, "a");
    await expectCode(() => clashing.next(), ErrorCode.INVALID_OPTION);
  });
});
