import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { AMQP_URL } from "@x/test-support/services";
import amqp from "amqplib";
import { deleteTopology as deleteAll } from "../src/index.js";

/** Deletes every queue and exchange of a prefixed topology (what a test declared), in use or not. */
export async function deleteTopology(prefix: string): Promise<void> {
  await deleteAll({ url: AMQP_URL, prefix, force: true });
}

/**
 * Every queue and exchange of the broker's default virtual host whose name starts with `start`, as the broker
 * lists them (`rabbitmqctl`, so nothing is declared to look).
 */
export async function brokerNames(start: string): Promise<{ queues: string[]; exchanges: string[] }> {
  const list = async (what: "list_queues" | "list_exchanges") => {
    const { stdout } = await promisify(execFile)("rabbitmqctl", [what, "-q", "--no-table-headers", "name"]);
    return stdout.split("\n").filter((name) => name.startsWith(start));
  };
  return { queues: await list("list_queues"), exchanges: await list("list_exchanges") };
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

/**
 * The active consumer's tag of every queue whose name starts with `start`, as the broker sees it
 * (`rabbitmqctl list_consumers`, whose `active` column is single active consumer's choice).
 */
export async function activeConsumers(start: string): Promise<Map<string, string>> {
  const { stdout } = await promisify(execFile)("rabbitmqctl", [
    "list_consumers",
    "-q",
    "--no-table-headers",
    "queue_name",
    "consumer_tag",
    "active",
  ]);
  const active = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const [queue, tag, flag] = line.split("\t");
    if (queue?.startsWith(start) && flag === "true") active.set(queue, tag as string);
  }
  return active;
}
