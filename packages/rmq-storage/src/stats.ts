import { checkEach, connectBroker, topology, topologyNames } from "./amqp.js";

/** One queue's figures; `null` where the figure is unknown (no such queue, or no management API). */
export interface QueueStats {
  queue: string;
  ready: number | null;
  unacked: number | null;
  consumers: number | null;
}

/** Options of {@link queueStats}. */
export interface QueueStatsOptions {
  /** The broker. */
  url: string;
  /** The management HTTP API. Default `http://<amqp host>:15672`, with the AMQP credentials. */
  management?: string;
  /** The topology's name prefix. Default `""`. */
  prefix?: string;
  /** How long to try to reach the broker, in ms. Default 5 000. */
  connectTimeoutMs?: number;
}

/**
 * The 160 worker queues and the 5 dead-letter queues: ready messages and consumers from a passive declare,
 * unacknowledged messages from the management API (`null` when it cannot be reached).
 *
 * @throws `ERR_X_RMQ_STORAGE_CONNECT` when the broker cannot be reached
 */
export async function queueStats(options: QueueStatsOptions): Promise<QueueStats[]> {
  const { queues, deadQueues } = topologyNames(topology(options.prefix ?? ""));
  const names = [...queues, ...deadQueues];
  const connection = await connectBroker({
    url: options.url,
    heartbeatMs: 0,
    timeoutMs: options.connectTimeoutMs ?? 5_000,
  });
  try {
    const [declared, unacked] = await Promise.all([
      checkEach(connection, names, async (channel, name) => {
        const ok = await channel.checkQueue(name);
        return { ready: ok.messageCount, consumers: ok.consumerCount };
      }),
      managementUnacked(options),
    ]);
    return names.map((queue) => ({
      queue,
      ready: declared.get(queue)?.ready ?? null,
      unacked: declared.has(queue) ? (unacked?.get(queue) ?? null) : null,
      consumers: declared.get(queue)?.consumers ?? null,
    }));
  } finally {
    await connection.close().catch(() => {});
  }
}

async function managementUnacked(options: QueueStatsOptions): Promise<Map<string, number> | null> {
  const amqpUrl = new URL(options.url);
  const base = new URL(options.management ?? `http://${amqpUrl.hostname}:15672`);
  const user = decodeURIComponent(base.username || amqpUrl.username || "guest");
  const password = decodeURIComponent(base.password || amqpUrl.password || "guest");
  base.username = "";
  base.password = "";
  const vhost = decodeURIComponent(amqpUrl.pathname.slice(1)) || "/";
  try {
    const response = await fetch(
      new URL(`api/queues/${encodeURIComponent(vhost)}?columns=name,messages_unacknowledged`, base),
      {
        headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` },
        signal: AbortSignal.timeout(3_000),
      },
    );
    if (!response.ok) return null;
    const list = (await response.json()) as Array<{ name: string; messages_unacknowledged?: number }>;
    return new Map(list.map((q) => [q.name, q.messages_unacknowledged ?? 0]));
  } catch {
    return null;
  }
}
