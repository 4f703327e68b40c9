import { type Logger, silentLogger } from "@x/core";
import { errorReasons, redactUrl } from "@x/core/internal";
import { checkEach, topology, topologyNames } from "./amqp.js";
import { connectBroker, urlList } from "./connect.js";
import { type ManagementApi, managementApi, managementBase } from "./management.js";
import { checkSecretOptions } from "./secrets.js";

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
  /** The broker, or the nodes of a cluster (the first that answers is asked; the management API of the first). */
  url: string | string[];
  /**
   * The management HTTP API, with the AMQP credentials unless it names its own. Default
   * `https://<amqp host>:15671` for an `amqps://` broker URL, `http://<amqp host>:15672` for an `amqp://` one
   * whose host is a loopback address (`localhost`, `127.0.0.0/8`, `::1`); required for an `amqp://` URL to
   * any other host, so that credentials never travel in clear unless asked for.
   */
  management?: string;
  /** The topology's name prefix. Default `""`. */
  prefix?: string;
  /** How long to try to reach the broker, in ms. Default 5 000. */
  connectTimeoutMs?: number;
  /**
   * Where to warn when the management API cannot be read (unreachable, refused login, an error status): the
   * `unacked` and `active` figures are then `null`. Default: silent.
   */
  logger?: Logger;
}

/**
 * The 160 worker queues and the 5 dead-letter queues: ready messages and consumers from a passive declare,
 * unacknowledged messages and the active consumer from the management API (`null` when it cannot be
 * reached, with a warning to `logger`). A queue that does not exist has `null` everywhere: a prefix that no
 * server has declared gives 165 such rows.
 *
 * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` for a bad URL, or an `amqp://` URL to a host that is not a
 *   loopback address without `management` (before any I/O); `ERR_X_RMQ_STORAGE_CONNECT` when the broker
 *   cannot be reached
 */
export async function queueStats(options: QueueStatsOptions): Promise<QueueStats[]> {
  checkSecretOptions(options);
  const first = urlList(options.url)[0] as string;
  const base = managementBase(first, options.management);
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
      managementFigures(managementApi(first, base), base, options.logger ?? silentLogger),
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
  api: ManagementApi,
  base: URL,
  logger: Logger,
): Promise<{ unacked: Map<string, number>; active: Map<string, string> } | null> {
  try {
    const [unacked, consumers, chosen] = await Promise.all([
      api.unacked(),
      api.consumers(),
      api.connectionNames(),
    ]);
    const active = new Map<string, string>();
    for (const consumer of consumers)
      if (consumer.active)
        active.set(consumer.queue, chosen.get(consumer.connection) || consumer.tag || "(unnamed)");
    return { unacked, active };
  } catch (error) {
    const where = redactUrl(base.href);
    logger.warn(
      { management: where },
      `cannot read the management API at ${where} (${errorReasons(error)}): unacked and active are unknown`,
    );
    return null;
  }
}
