// A restart outside a downtime, on Redis Streams: orders (the dependent) are priced from a price stream (the
// dependency), with the checkpoint in a SQLite file. The first process stops after order 10:10; the second
// one opens the same file and resumes both streams where the checkpoint says:
// - the orders at the last order pulsed (`cp.state.id`, inclusive: that order is processed again);
// - the prices at the last price heard (`checkpointMarker`): read from the first price instead, the
//   dependency's marker would go back to 10:00 while the orders are at 10:10, and the next pulse would
//   report a downtime that never happened.
// Each process is a real child process of this script.
// Run: pnpm --filter @x/checkpoint example:restart (Redis at REDIS_URL, default redis://127.0.0.1:6379)
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Checkpoint, Dependency, SqliteCache } from "@x/checkpoint";
import { redisStream } from "@x/checkpoint/redis";
import { createClient } from "redis";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const minute = (m: number) => Date.UTC(2025, 0, 1, 10, m);
const clock = (time: Date) => time.toISOString().slice(11, 16);

/** One process: prices and orders from where the checkpoint in `file` says, until the order at `lastMinute`. */
async function work(file: string, orderKey: string, priceKey: string, lastMinute: number) {
  const orders = redisStream({ client: createClient({ url }), key: orderKey, blockMs: 100 });
  const prices = redisStream({ client: createClient({ url }), key: priceKey, blockMs: 100 });
  await using cache = new SqliteCache(file);
  const cp = await Checkpoint.open("pricing", {
    dependent: orders,
    dependencies: [new Dependency("prices", { stream: prices, downtimeThresholdMs: 5 * 60_000 })],
    cache,
    downtimeCallback: (_cp, dep) =>
      console.log(`prices down: last price at ${clock(dep.checkpointMarker as Date)}`),
  });
  // Where the last process stopped: nothing at the first start.
  const lastOrder = (cp.state as { id?: string }).id;
  const lastPrice = cp.dependency("prices").checkpointMarker as Date | undefined;
  if (lastOrder) await orders.seek(lastOrder);
  if (lastPrice) await prices.seek(`${lastPrice.getTime()}-0`);
  console.log(
    lastOrder
      ? `restarted: orders from ${clock(new Date(Number(lastOrder.split("-")[0])))}, prices from ${clock(lastPrice as Date)}`
      : "started: orders and prices from the first",
  );

  // The orders start once a price was heard, and then both streams are read side by side.
  let heard!: () => void;
  const pricesHeard = new Promise<void>((resolve) => {
    heard = resolve;
  });
  const following = (async () => {
    for await (const price of prices) {
      await cp.heartbeat(price.time);
      heard();
    }
  })();
  await pricesHeard;
  console.log(`first price heard at ${clock(cp.dependency("prices").checkpointMarker as Date)}`);
  for await (const order of orders) {
    await cp.checkPulse(order.time, { id: order.id });
    console.log(`order ${order.fields.order} at ${clock(order.time)}`);
    if (order.time.getTime() === minute(lastMinute)) break;
  }
  await prices.close();
  await following;
}

const [role, file, orderKey, priceKey, last] = process.argv.slice(2);
if (role === "worker") {
  await work(file as string, orderKey as string, priceKey as string, Number(last));
} else {
  const suffix = `${process.pid}-${Date.now()}`;
  const keys = { orders: `example:orders:${suffix}`, prices: `example:prices:${suffix}` };
  const dir = mkdtempSync(join(tmpdir(), "x-checkpoint-restart-"));
  const producer = await createClient({ url }).connect();
  try {
    // Prices from 10:00 to 10:30, orders from 10:00 to 10:20; each id carries its event time.
    for (let m = 0; m <= 30; m++)
      await producer.xAdd(keys.prices, `${minute(m)}-0`, { price: String(100 + m) });
    for (let m = 0; m <= 20; m++) await producer.xAdd(keys.orders, `${minute(m)}-0`, { order: String(m) });
    const run = (lastMinute: number) =>
      process.stdout.write(
        execFileSync(
          process.execPath,
          [
            ...process.execArgv,
            fileURLToPath(import.meta.url),
            "worker",
            join(dir, "checkpoints.db"),
            keys.orders,
            keys.prices,
            String(lastMinute),
          ],
          { encoding: "utf8" },
        ),
      );
    run(10); // the first process stops after the order at 10:10
    run(20); // the second one resumes
    console.log("done");
  } finally {
    await producer.del([keys.orders, keys.prices]);
    producer.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
