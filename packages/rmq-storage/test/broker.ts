import { AMQP_URL } from "@x/test-support/services";
import amqp from "amqplib";
import { topology, topologyNames } from "../src/amqp.js";

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
