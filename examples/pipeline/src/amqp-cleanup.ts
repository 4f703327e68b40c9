import amqp from "amqplib";

const RANGES = [..."0123456789abcdef"];

/** Queues of the @x/rmq-storage topology per exchange (its README table), without ranges. */
const QUEUES: Record<string, string[]> = {
  content: ["content_add.unknown", "relation_add.content_in_revision", "relation_add.content_in_directory"],
  directory: ["directory_add.unknown", "relation_add.directory_in_revision"],
  revision: [
    "revision_add.unknown",
    "relation_add.revision_before_revision",
    "relation_add.revision_in_origin",
  ],
  origin: ["origin_add.unknown"],
  location: ["location_add.unknown"],
};

/**
 * Deletes what the demo declared on the broker: the prefixed rmq-storage topology (160 queues, 5 dead-letter
 * queues, 10 exchanges) and the fake catalog's notice exchange. Errors are ignored: this is cleanup.
 */
export async function deleteDemoTopology(url: string, prefix: string, exchanges: string[]): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    channel.on("error", () => {});
    const queues: string[] = [];
    for (const [exchange, bases] of Object.entries(QUEUES)) {
      queues.push(`${prefix}${exchange}.dead`);
      for (const base of bases) for (const range of RANGES) queues.push(`${prefix}${base}.${range}`);
      exchanges.push(`${prefix}${exchange}`, `${prefix}${exchange}.dead`);
    }
    for (const queue of queues) await channel.deleteQueue(queue);
    for (const exchange of exchanges) await channel.deleteExchange(exchange);
    await channel.close();
  } finally {
    await connection.close().catch(() => {});
  }
}
