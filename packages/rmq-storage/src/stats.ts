import { redactUrl } from "@x/core/internal";
import { checkEach, connectBroker, topology, topologyNames } from "./amqp.js";
import { ErrorCode, RmqStorageError } from "./errors.js";
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
  /** The broker. */
  url: string;
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
}

/**
 * The 160 worker queues and the 5 dead-letter queues: ready messages and consumers from a passive declare,
 * unacknowledged messages and the active consumer from the management API (`null` when it cannot be
 * reached).
 *
 * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` for a bad URL, or an `amqp://` URL to a host that is not a
 *   loopback address without `management` (before any I/O); `ERR_X_RMQ_STORAGE_CONNECT` when the broker
 *   cannot be reached
 */
export async function queueStats(options: QueueStatsOptions): Promise<QueueStats[]> {
  checkSecretOptions(options);
  const base = managementBase(options.url, options.management);
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
      managementFigures(options.url, base),
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
  url: string,
  base: URL,
): Promise<{ unacked: Map<string, number>; active: Map<string, string> } | null> {
  const amqpUrl = new URL(url);
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
    const [queues, consumers, connections] = await Promise.all([
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
      // A consumer's channel_details.connection_name is the broker's name for the connection (its peer
      // addresses); the name the client chose (connection_name in its client properties) is the connection's
      // user_provided_name.
      get<Array<{ name: string; user_provided_name?: string }>>(
        `api/vhosts/${vhost}/connections?columns=name,user_provided_name`,
      ),
    ]);
    const chosen = new Map(connections.map((c) => [c.name, c.user_provided_name]));
    const active = new Map<string, string>();
    for (const consumer of consumers)
      if (consumer.active !== false && consumer.queue?.name !== undefined)
        active.set(
          consumer.queue.name,
          chosen.get(consumer.channel_details?.connection_name ?? "") || consumer.consumer_tag || "(unnamed)",
        );
    return { unacked: new Map(queues.map((q) => [q.name, q.messages_unacknowledged ?? 0])), active };
  } catch {
    return null;
  }
}

/** Whether `host` (a URL's `hostname`) is this machine: `localhost`, `127.0.0.0/8` or `::1`. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Where {@link queueStats} asks the management API: `management` when given; else `https://<host>:15671/` for
 * `amqps://`, `http://<host>:15672/` for `amqp://` to a loopback host.
 *
 * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` for an `amqp://` URL to any other host without `management`, or
 *   a `management` that is not an `http://` or `https://` URL (shown with its password as `***`)
 */
export function managementBase(url: string, management: string | undefined): URL {
  if (management !== undefined) {
    if (!/^https?:\/\/./.test(management) || !URL.canParse(management))
      throw new RmqStorageError(
        ErrorCode.INVALID_OPTION,
        `invalid option management: ${JSON.stringify(redactUrl(management))} (expected an http:// or https:// URL)`,
      );
    return new URL(management);
  }
  const amqpUrl = new URL(url);
  if (amqpUrl.protocol === "amqps:") return new URL(`https://${amqpUrl.host.replace(/:\d+$/, "")}:15671/`);
  if (!isLoopback(amqpUrl.hostname))
    throw new RmqStorageError(
      ErrorCode.INVALID_OPTION,
      `invalid option management: undefined (expected an explicit management URL: ${redactUrl(url)} is amqp:// to a host that is not a loopback address, and the default http://${amqpUrl.hostname}:15672 would carry the AMQP credentials in clear)`,
    );
  return new URL(`http://${amqpUrl.host.replace(/:\d+$/, "")}:15672/`);
}
