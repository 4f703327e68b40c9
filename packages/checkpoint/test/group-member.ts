// One member of a consumer group pricing orders, as a user writes it (the README's "Consumer groups on
// Redis" and "on NATS"), run as a child process (startMember in member-logs.ts) on the broker that its config
// names (member-engines.ts). It appends a JSON line to its log for each order it handles and for each pause,
// seek, resume and price, written synchronously so that a SIGKILL loses none.
import { closeSync, openSync, writeSync } from "node:fs";
import { Checkpoint, Dependency } from "@x/checkpoint";
import { openMemberEngine } from "./member-engines.js";

/** What a member is told by the test. */
export interface MemberConfig {
  engine: "redis" | "nats";
  /** The broker: a Redis URL, or a NATS server `host:port`. */
  url: string;
  /** The orders' and the prices' Redis stream keys or JetStream stream names. */
  orders: string;
  prices: string;
  group: string;
  consumer: string;
  /** The prefix of the checkpoint's keys in Redis (not used on NATS, where the checkpoint lives in memory). */
  cachePrefix: string;
  logFile: string;
  batchSize: number;
  /** How long a dead member's unacknowledged records wait for another member: `claimIdleMs`, `ackWaitMs`. */
  redeliverMs: number;
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

  const { orders, prices: priceTimes, cache, timeOf, idOf } = await openMemberEngine(config);
  const prices = new Dependency("prices", { downtimeThresholdMs: config.downtimeThresholdMs });
  const cp = await Checkpoint.open(`pricing-${config.consumer}`, {
    dependent: orders,
    dependencies: [prices],
    ...(cache ? { cache } : {}),
    // from where this member saw the prices down: the group replays once, from the earliest such point
    recoveryCallback: (_cp, dep) => {
      const { position } = dep.checkpointState as { position: unknown };
      write({ kind: "seek", id: idOf(position), at: Date.now() });
      return orders.seek(position);
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

  const followPrices = async () => {
    for await (const time of priceTimes) {
      const wasDown = prices.isDown;
      const { isLate } = await cp.heartbeat(time);
      write({ kind: "price", time: time.getTime(), late: isLate, at: Date.now() });
      if (wasDown && !isLate) write({ kind: "resumed", at: Date.now() });
    }
  };
  const priceOrders = async () => {
    for await (const order of orders) {
      const position = orders.position;
      lastOrder = idOf(position);
      write({ kind: "handled", id: lastOrder, at: Date.now(), paused: orders.paused });
      await cp.checkPulse(timeOf(order), { position });
    }
  };
  console.log("ready");
  await Promise.all([followPrices(), priceOrders()]);
}
