// The two-streams example on a real engine, Redis Streams: orders (the dependent) are priced with the latest
// price from a price stream (the dependency). The price stream stalls after 10:04; the checkpoint pauses
// the orders on Redis (no XREAD while paused), and when the prices catch up it seeks the orders back to the
// first one priced more than 5 minutes late and replays them with the fresh prices. After the replay the
// orders, already read, can run ahead of the prices again: each such outage pauses and replays the same way.
// Run: pnpm --filter @x/checkpoint example:redis (Redis at REDIS_URL, default redis://127.0.0.1:6379)
import { once } from "node:events";
import { Checkpoint, Dependency } from "@x/checkpoint";
import { redisStream } from "@x/checkpoint/redis";
import { createClient } from "redis";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const minute = (m: number) => Date.UTC(2025, 0, 1, 10, m);
const clock = (time: Date) => time.toISOString().slice(11, 16);
const suffix = `${process.pid}-${Date.now()}`;
const keys = { orders: `example:orders:${suffix}`, prices: `example:prices:${suffix}` };

const producer = await createClient({ url }).connect();
/** Adds one entry whose id carries its event time, so that `record.time` is that time. */
const add = (key: string, m: number, fields: Record<string, string>) =>
  producer.xAdd(key, `${minute(m)}-0`, fields);

// Prices from 10:00 to 10:04, then the price feed stalls; orders every minute from 10:00 to 10:20.
for (let m = 0; m <= 4; m++) await add(keys.prices, m, { price: String(100 + m) });
for (let m = 0; m <= 20; m++) await add(keys.orders, m, { order: String(m) });

// Each stream gets a client of its own: XREAD BLOCK holds the connection while it waits.
const readers = [await producer.duplicate().connect(), await producer.duplicate().connect()] as const;
const orders = redisStream({ client: readers[0], key: keys.orders, blockMs: 100 });
const prices = redisStream({ client: readers[1], key: keys.prices, blockMs: 100 });
const priceLog = new Map<number, number>(); // event time → price
const priceAt = (time: Date) => {
  let found: number | undefined;
  for (const [at, price] of priceLog) if (at <= time.getTime()) found = price;
  return found;
};

const checkpoint = new Checkpoint("pricing", {
  dependent: orders,
  dependencies: [new Dependency("prices", { stream: prices, downtimeThresholdMs: 5 * 60_000 })],
  downtimeCallback: (_cp, dep) => {
    console.log(
      `prices down: last price at ${clock(dep.checkpointMarker as Date)}, orders paused ` +
        `(Redis delivered ${orders.deliveries} orders so far)`,
    );
  },
  recoveryCallback: async (_cp, dep) => {
    const { id } = dep.checkpointState as { id: string };
    console.log(
      `prices caught up at ${clock(dep.checkpointMarker as Date)}: reprice orders from ${clock(new Date(Number(id.split("-")[0])))}, ` +
        `Redis delivered ${orders.deliveries} orders so far`,
    );
    await orders.seek(id);
  },
});

async function followPrices() {
  for await (const record of prices) {
    priceLog.set(record.time.getTime(), Number(record.fields.price));
    const { isLate } = await checkpoint.heartbeat(record.time);
    if (isLate) console.log(`late price ${record.fields.price} at ${clock(record.time)}`);
  }
}

async function priceOrders() {
  for await (const order of orders) {
    console.log(`order ${order.fields.order} at ${clock(order.time)} priced ${priceAt(order.time)}`);
    await checkpoint.checkPulse(order.time, { id: order.id });
    // The last order, unless its pulse found the prices down: then it is replayed after the recovery.
    if (order.fields.order === "20" && !checkpoint.dependency("prices").isDown) break;
  }
}

// Wait until the prices up to 10:04 are known, so that the first orders are priced as they would be live.
const following = followPrices();
while (priceLog.size < 5) await new Promise((resolve) => setTimeout(resolve, 10));
const pricing = priceOrders();
await once(checkpoint, "down");
// The price feed comes back: the late prices from 10:05 on, while the orders stay paused.
for (let m = 5; m <= 25; m++) await add(keys.prices, m, { price: String(100 + m) });
await pricing;
await prices.close();
await following;
console.log(`done: Redis delivered ${orders.deliveries} orders in all`);
await orders.close();
await producer.del([keys.orders, keys.prices]);
for (const client of [...readers, producer]) client.destroy();
