import { checkEach, connectBroker, topology, topologyNames } from "./amqp.js";

/** One queue's figures; `null` where the figure is unknown (no such queue, or no management API). */
export interface QueueStats {
  queue: string;
  ready: number | null;
  unacked: number | null;
  consumers: number | null;
  /**
   * The active consumer (single active consumer: the one the broker delivers to), named by its connection:
   * a server names its connection `x-rmq-storage <host> pid <pid> ranges <ranges>[ standby]`. From the
   * management API; `null` when it cannot be reached or the queue has no consumer.
   */
  active: string | null;
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
 * unacknowledged messages and the active consumer from the management API (`null` when it cannot be
 * reached).
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
    const [declared, management] = await Promise.all([
      checkEach(connection, names, async (channel, name) => {
        const ok = await channel.checkQueue(name);
        return { ready: ok.messageCount, consumers: ok.consumerCount };
      }),
      managementFigures(options),
    ]);
    return names.map((queue) => ({
      queue,
      ready: declared.get(queue)?.ready ?? null,
      unacked: declared.has(queue) ? (management?.unacked.get(queue) ?? null) : null,
      consumers: declared.get(queue)?.consumers ?? null,
      active: (declared.has(queue) && management?.active.get(queue)) || null,
    }));
  } finally {
    await connection.close().catch(() => {});
  }
}

/** What the management API adds: unacknowledged messages and the active consumer's connection, per queue. */
async function managementFigures(
  options: QueueStatsOptions,
): Promise<{ unacked: Map<string, number>; active: Map<string, string> } | null> {
  const amqpUrl = new URL(options.url);
  const base = new URL(options.management ?? `http://${amqpUrl.hostname}:15672`);
  const user = decodeURIComponent(base.username || amqpUrl.username || "guest");
  const password = decodeURIComponent(base.password || amqpUrl.password || "guest");
  base.username = "";
  base.password = "";
  const vhost = encodeURIComponent(decodeURIComponent(amqpUrl.pathname.slice(1)) || "/");
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(new URL(path, base), {
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` },
      signal: AbortSignal.timeout(3_000),
    });
    if (!response.ok) throw new Error(`management API: HTTP ${response.status}`);
    return (await response.json()) as T;
  };
  try {
    const [queues, consumers] = await Promise.all([
      get<Array<{ name: string; messages_unacknowledged?: number }>>(
        `api/queues/${vhost}?columns=name,messages_unacknowledged`,
      ),
      get<
        Array<{
          queue?: { name?: string };
          active?: boolean;
          consumer_tag?: string;
          channel_details?: { connection_name?: string };
        }>
      >(`api/consumers/${vhost}`),
    ]);
    const active = new Map<string, string>();
    for (const consumer of consumers)
      if (consumer.active !== false && consumer.queue?.name !== undefined)
        active.set(
          consumer.queue.name,
          consumer.channel_details?.connection_name || consumer.consumer_tag || "(unnamed)",
        );
    return { unacked: new Map(queues.map((q) => [q.name, q.messages_unacknowledged ?? 0])), active };
  } catch {
    return null;
  }
}
