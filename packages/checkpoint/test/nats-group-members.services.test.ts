// A consumer group of member processes on NATS JetStream through a downtime of their dependency
// (group-members-run.ts): 3 members on 100 000 orders whose prices stall; one member is SIGKILLed during the
// stall and a fourth joins.
//
// A services test of this package (NATS only, and it disturbs no service, so not a system test); it runs on
// Node 24, in the services tier, and is left out of the Node 22 and 26 legs: what it tests is the group's
// protocol over JetStream, not the runtime.
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { beforeAll, it, onTestFinished, vi } from "vitest";
import { groupStreamName } from "../src/engines/nats-group.js";
import { type GroupBroker, orderTime, priceTime, runGroupMembers, victims } from "./group-members-run.js";

const NATS_SERVER = process.env.NATS_SERVER ?? "127.0.0.1:4222";
// 100 000 orders through four processes on a shared, loaded 2-core machine: the waits of the run add up to
// less than this.
vi.setConfig({ testTimeout: 420_000 });

/** Publishes messages `from` to `to` − 1 on `subject`, payload `{ t }` (the event time), by thousands. */
async function add(
  js: ReturnType<typeof jetstream>,
  subject: string,
  from: number,
  to: number,
  time: (n: number) => number,
) {
  for (let start = from; start < to; start += 5_000) {
    const writes = [];
    for (let n = start; n < Math.min(to, start + 5_000); n++)
      writes.push(js.publish(subject, JSON.stringify({ t: time(n) })));
    await Promise.all(writes);
  }
}

/**
 * A run's streams, deleted after the test, with the group's own; order i is the stream's sequence i + 1, which
 * the check names `<i + 1>-0`.
 */
async function natsBroker(): Promise<GroupBroker> {
  const nc = await connect({ servers: NATS_SERVER });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const run = uniqueName("group").toUpperCase();
  const orders = `${run}_ORDERS`;
  const prices = `${run}_PRICES`;
  const group = "pricing";
  const own = groupStreamName(orders, group);
  const subject = (key: string) => `$CHECKPOINT.${orders}.${group}.${key}`;
  onTestFinished(async () => {
    for (const stream of [orders, prices, own]) await jsm.streams.delete(stream).catch(() => {});
    await nc.close();
  });
  await jsm.streams.add({ name: orders, subjects: [`${run}.orders`] });
  await jsm.streams.add({ name: prices, subjects: [`${run}.prices`] });
  const last = (key: string) => jsm.streams.getMessage(own, { last_by_subj: subject(key) }).catch(() => null);
  /** The flag holds its downtime: the group is paused until the downtime ended (by a resume or a lapse). */
  const liveFlag = async () => {
    const flag = await last("paused");
    return flag && (flag.json() as { ended?: string }).ended === undefined ? flag : null;
  };
  return {
    test: "nats-group-members",
    member: { engine: "nats", url: NATS_SERVER, orders, prices, group, cachePrefix: "" },
    addOrders: (from, to) => add(js, `${run}.orders`, from, to, orderTime),
    addPrices: (from, to) => add(js, `${run}.prices`, from, to, priceTime),
    orderId: (i) => `${i + 1}-0`,
    paused: async () => (await liveFlag()) !== null,
    flag: async () => (await liveFlag())?.string() ?? null,
    replayPoint: async () => {
      const replay = await last("replay");
      return replay ? `${(replay.json() as { seq: number }).seq}-0` : undefined;
    },
    pending: async () => (await jsm.consumers.info(orders, group)).num_ack_pending,
  };
}

beforeAll(() => requireService("NATS", `nats://${NATS_SERVER}`));

it.for(Object.entries(victims))(
  "3 members, prices stalled, %s killed and a member joining: every order handled once the prices recover, none skipped after the replay",
  async ([, victimOf]) => runGroupMembers(await natsBroker(), victimOf),
);
