// One member of a consumer group pricing orders, as a user writes it (the README's "Consumer groups on
// Redis"), run as a child process (startMember in member-logs.ts). It appends a JSON line to its log for each order it handles and for each
// pause, seek, resume and price, written synchronously so that a SIGKILL loses none.
import { closeSync, openSync, writeSync } from "node:fs";
import { Checkpoint, Dependency } from "@x/checkpoint";
import { RedisCache, redisStream } from "@x/checkpoint/redis";
import { createClient } from "redis";

/** What a member is told by the test. */
export interface MemberConfig {
  url: string;
  ordersKey: string;
  pricesKey: string;
  group: string;
  consumer: string;
  cachePrefix: string;
  logFile: string;
  batchSize: number;
  claimIdleMs: number;
  downtimeThresholdMs: number;
}

/** A line of a member's log (`member` is added when the logs are read, from the file). */
export type MemberLogLine =
  | { kind: "handled"; id: string; at: number; paused: boolean }
  | { kind: "down"; id: string; at: number }
  | { kind: "seek"; id: string; at: number }
  | { kind: "resumed"; at: number }
  | { kind: "price"; time: number; late: boolean; at: number }
  | { kind: "paused-seen" | "running-seen"; at: number };

/** How often the member looks at its stream's `paused`, to log when another member's pause reached it. */
const PAUSED_POLL_MS = 20;

/** Runs the member until it is killed; prints `ready` once its checkpoint is open. */
export async function runMember(config: MemberConfig): Promise<void> {
  const log = openSync(config.logFile, "a");
  const write = (line: MemberLogLine) => writeSync(log, `${JSON.stringify(line)}\n`);
  process.once("exit", () => closeSync(log));

  const orders = redisStream({
    client: createClient({ url: config.url }),
    key: config.ordersKey,
    group: { name: config.group, consumer: config.consumer, claimIdleMs: config.claimIdleMs },
    batchSize: config.batchSize,
  });
  const cache = new RedisCache({
    client: await createClient({ url: config.url }).connect(),
    prefix: config.cachePrefix,
  });
  const prices = new Dependency("prices", { downtimeThresholdMs: config.downtimeThresholdMs });
  const cp = await Checkpoint.open(`pricing-${config.consumer}`, {
    dependent: orders,
    dependencies: [prices],
    cache,
    // from where this member saw the prices down: the group replays once, from the earliest such point
    recoveryCallback: (_cp, dep) => {
      const { id } = dep.checkpointState as { id: string };
      write({ kind: "seek", id, at: Date.now() });
      return orders.seek(id);
    },
  });
  let lastOrder = "";
  cp.on("down", () => write({ kind: "down", id: lastOrder, at: Date.now() }));

  let seenPaused = orders.paused;
  setInterval(() => {
    if (orders.paused === seenPaused) return;
    seenPaused = orders.paused;
    write({ kind: seenPaused ? "paused-seen" : "running-seen", at: Date.now() });
  }, PAUSED_POLL_MS);

  const priceStream = redisStream({ client: createClient({ url: config.url }), key: config.pricesKey });
  const followPrices = async () => {
    for await (const price of priceStream) {
      const wasDown = prices.isDown;
      const { isLate } = await cp.heartbeat(price.time);
      write({ kind: "price", time: price.time.getTime(), late: isLate, at: Date.now() });
      if (wasDown && !isLate) write({ kind: "resumed", at: Date.now() });
    }
  };
  const priceOrders = async () => {
    for await (const order of orders) {
      lastOrder = order.id;
      write({ kind: "handled", id: order.id, at: Date.now(), paused: orders.paused });
      await cp.checkPulse(order.time, { id: order.id });
    }
  };
  console.log("ready");
  await Promise.all([followPrices(), priceOrders()]);
}
