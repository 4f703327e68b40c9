import amqp from "amqplib";
import { topology, topologyNames } from "../src/amqp.js";
import { AMQP_URL } from "./services.js";

/** Deletes every queue and exchange of a prefixed topology (what a test declared). */
export async function deleteTopology(prefix: string): Promise<void> {
  const connection = await amqp.connect(AMQP_URL);
  const { exchanges, queues, deadQueues } = topologyNames(topology(prefix));
  const channel = await connection.createChannel();
  await Promise.all([...queues, ...deadQueues].map((queue) => channel.deleteQueue(queue)));
  await Promise.all(exchanges.map((exchange) => channel.deleteExchange(exchange)));
  await connection.close();
}

/** Messages ready in a queue (passive declare), or `null` when it does not exist. */
export async function queueDepth(queue: string): Promise<{ ready: number; consumers: number } | null> {
  const connection = await amqp.connect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    channel.on("error", () => {});
    const ok = await channel.checkQueue(queue);
    return { ready: ok.messageCount, consumers: ok.consumerCount };
  } catch {
    return null;
  } finally {
    await connection.close().catch(() => {});
  }
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
  what = "condition",
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
