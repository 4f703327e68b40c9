import { deleteTopology } from "@x/rmq-storage";
import amqp from "amqplib";

/**
 * Deletes what the demo declared on the broker: the prefixed rmq-storage topology (with `deleteTopology`, forced:
 * the demo is over, whatever is left in its queues goes) and the fake catalog's notice exchanges. Errors are
 * ignored: this is cleanup.
 */
export async function deleteDemoTopology(url: string, prefix: string, exchanges: string[]): Promise<void> {
  await deleteTopology({ url, prefix, force: true }).catch(() => {});
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    channel.on("error", () => {});
    for (const exchange of exchanges) await channel.deleteExchange(exchange);
    await channel.close();
  } finally {
    await connection.close().catch(() => {});
  }
}
