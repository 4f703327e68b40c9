// Two async generators: orders (the dependent) are priced with the latest price from a price feed (the
// dependency). The feed stalls for a while; the checkpoint pauses the orders, and when the feed has caught up
// it names the first order that was priced with a stale price, then resumes the orders.
// Run: pnpm --filter @x/checkpoint example
import { setTimeout as sleep } from "node:timers/promises";
import { Checkpoint, Dependency, pausable } from "@x/checkpoint";

const minute = (m: number) => new Date(Date.UTC(2025, 0, 1, 10, m));
const clock = (time: Date) => time.toISOString().slice(11, 16);

async function* orderFeed() {
  for (let offset = 0; offset <= 20; offset++) {
    await sleep(5);
    yield { offset, time: minute(offset) };
  }
}

async function* priceFeed() {
  for (let m = 0; m <= 21; m++) {
    await sleep(m === 5 ? 1_000 : 5); // the outage: nothing arrives after 10:04 for a second
    yield { time: minute(m), price: 100 + m };
  }
}

const orders = pausable(orderFeed());
const prices = new Dependency("prices", { stream: priceFeed(), downtimeThresholdMs: 10 * 60_000 });
let latestPrice = 0;

const checkpoint = new Checkpoint("pricing", {
  dependent: orders,
  dependencies: [prices],
  downtimeCallback: (_cp, dep) => {
    console.log(`prices down: last price at ${clock(dep.checkpointMarker as Date)}, orders paused`);
  },
  recoveryCallback: (_cp, dep) => {
    const { offset } = dep.checkpointState as { offset: number };
    console.log(
      `prices caught up at ${clock(dep.checkpointMarker as Date)}: reprice orders from offset ${offset} (the first one priced more than 10 min late)`,
    );
  },
});

async function priceOrders() {
  for await (const order of orders) {
    console.log(`order ${order.offset} at ${clock(order.time)} priced ${latestPrice}`);
    await checkpoint.checkPulse(order.time, { offset: order.offset });
  }
}

async function followPrices() {
  for await (const { time, price } of prices.stream as AsyncIterable<{ time: Date; price: number }>) {
    latestPrice = price;
    const { isLate } = await checkpoint.heartbeat(time);
    if (isLate) console.log(`late price ${price} at ${clock(time)}`);
  }
}

await Promise.all([priceOrders(), followPrices()]);
console.log("done", JSON.stringify(checkpoint));
