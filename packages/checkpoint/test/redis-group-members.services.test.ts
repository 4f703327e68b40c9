// A consumer group of member processes on Redis through a downtime of their dependency (group-members-run.ts):
// 3 members on 100 000 orders whose prices stall; one member is SIGKILLed during the stall and a fourth joins.
//
// A services test of this package (Redis only, and it disturbs no service, so not a system test); it runs
// on Node 24, in the services tier, and is left out of the Node 22 and 26 legs: what it tests is the group's
// protocol over Redis, not the runtime.
import { requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { createClient } from "redis";
import { beforeAll, it, onTestFinished, vi } from "vitest";
import { type GroupBroker, orderTime, priceTime, runGroupMembers, victims } from "./group-members-run.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
// 100 000 orders through four processes on a shared, loaded 2-core machine (about 10 s when idle): the waits
// of the run add up to less than this.
vi.setConfig({ testTimeout: 420_000 });

async function connect() {
  const client = createClient({ url: REDIS_URL });
  client.on("error", () => {});
  await client.connect();
  return client;
}
type Admin = Awaited<ReturnType<typeof connect>>;

/** Adds entries `from` to `to` − 1 of a stream, with the ids and fields `entry` gives, pipelined by thousands. */
async function add(
  admin: Admin,
  key: string,
  from: number,
  to: number,
  entry: (n: number) => [string, Record<string, string>],
) {
  for (let start = from; start < to; start += 5_000) {
    const writes = [];
    for (let n = start; n < Math.min(to, start + 5_000); n++) writes.push(admin.xAdd(key, ...entry(n)));
    await Promise.all(writes);
  }
}

/** A run's streams under a fresh key prefix, deleted after the test; order i's id is `<its time>-0`. */
async function redisBroker(): Promise<GroupBroker> {
  const run = uniqueName("group");
  const admin = await connect();
  onTestFinished(async () => {
    const keys: string[] = [];
    for await (const found of admin.scanIterator({ MATCH: `${run}:*`, COUNT: 1_000 })) keys.push(...found);
    if (keys.length > 0) await admin.del(keys);
    admin.destroy();
  });
  const orders = `${run}:orders`;
  const group = "pricing";
  const pausedKey = `${orders}:${group}:paused`;
  const orderId = (i: number) => `${orderTime(i)}-0`;
  return {
    test: "redis-group-members",
    member: {
      engine: "redis",
      url: REDIS_URL,
      orders,
      prices: `${run}:prices`,
      group,
      cachePrefix: `${run}:pricing`,
    },
    addOrders: (from, to) => add(admin, orders, from, to, (i) => [orderId(i), { i: String(i) }]),
    addPrices: (from, to) =>
      add(admin, `${run}:prices`, from, to, (k) => [`${priceTime(k)}-0`, { price: String(100 + k) }]),
    orderId,
    paused: async () => (await admin.get(pausedKey)) !== null,
    flag: () => admin.get(pausedKey),
    replayPoint: async () => (await admin.hGetAll(`${orders}:${group}:replay`)).id,
    pending: async () => (await admin.xPending(orders, group)).pending,
  };
}

beforeAll(() => requireService("Redis", REDIS_URL));

it.for(Object.entries(victims))(
  "3 members, prices stalled, %s killed and a member joining: every order handled once the prices recover, none skipped after the replay",
  async ([, victimOf]) => runGroupMembers(await redisBroker(), victimOf),
);
