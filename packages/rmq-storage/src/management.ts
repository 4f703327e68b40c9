import { redactUrl } from "@x/core/internal";
import { ErrorCode, RmqStorageError } from "./errors.js";

/** Whether `host` (a URL's `hostname`) is this machine: `localhost`, `127.0.0.0/8` or `::1`. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Where the management API of the broker at `url` answers: `management` when given; else
 * `https://<host>:15671/` for `amqps://`, `http://<host>:15672/` for `amqp://` to a loopback host.
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
  if (amqpUrl.protocol === "amqps:") return new URL(`https://${amqpUrl.hostname}:15671/`);
  if (!isLoopback(amqpUrl.hostname))
    throw new RmqStorageError(
      ErrorCode.INVALID_OPTION,
      `invalid option management: undefined (expected an explicit management URL: ${redactUrl(url)} is amqp:// to a host that is not a loopback address, and the default http://${amqpUrl.hostname}:15672 would carry the AMQP credentials in clear)`,
    );
  return new URL(`http://${amqpUrl.hostname}:15672/`);
}

/** One consumer as the management API lists it. */
export interface ManagementConsumer {
  queue: string;
  /** The consumer's tag. */
  tag: string;
  /** Whether the broker delivers to it: `false` for a single-active-consumer queue's waiting consumers. */
  active: boolean;
  /** The broker's name for the consumer's connection (its peer addresses). */
  connection: string;
}

/** The calls to a broker's management API that the CLI and the metrics need, in the broker's virtual host. */
export interface ManagementApi {
  /** Unacknowledged messages per queue. */
  unacked(): Promise<Map<string, number>>;
  consumers(): Promise<ManagementConsumer[]>;
  /** The name each connection's client chose (its `connection_name`), by the broker's name for it. */
  connectionNames(): Promise<Map<string, string | undefined>>;
}

/**
 * The management API at `base` for the broker at `url`: the virtual host of `url`, the credentials of `base`
 * when it has them, else those of `url` (else `guest`); each call times out after 3 s and rejects on any
 * answer but a 2xx.
 */
export function managementApi(url: string, base: URL): ManagementApi {
  const amqpUrl = new URL(url);
  const user = decodeURIComponent(base.username || amqpUrl.username || "guest");
  const password = decodeURIComponent(base.password || amqpUrl.password || "guest");
  const root = new URL(base);
  root.username = "";
  root.password = "";
  const vhost = encodeURIComponent(decodeURIComponent(amqpUrl.pathname.slice(1)) || "/");
  const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(new URL(path, root), {
      headers: { authorization },
      signal: AbortSignal.timeout(3_000),
    });
    if (!response.ok) throw new Error(`management API: HTTP ${response.status}`);
    return (await response.json()) as T;
  };
  return {
    async unacked() {
      const queues = await get<Array<{ name: string; messages_unacknowledged?: number }>>(
        `api/queues/${vhost}?columns=name,messages_unacknowledged`,
      );
      return new Map(queues.map((q) => [q.name, q.messages_unacknowledged ?? 0]));
    },
    async consumers() {
      const consumers = await get<
        Array<{
          queue?: { name?: string };
          active?: boolean;
          consumer_tag?: string;
          channel_details?: { connection_name?: string };
        }>
      >(`api/consumers/${vhost}`);
      return consumers.flatMap((c) =>
        c.queue?.name === undefined
          ? []
          : [
              {
                queue: c.queue.name,
                tag: c.consumer_tag ?? "",
                active: c.active !== false,
                connection: c.channel_details?.connection_name ?? "",
              },
            ],
      );
    },
    async connectionNames() {
      // A consumer's channel_details.connection_name is the broker's name for the connection (its peer
      // addresses); the name the client chose (connection_name in its client properties) is the connection's
      // user_provided_name.
      const connections = await get<Array<{ name: string; user_provided_name?: string }>>(
        `api/vhosts/${vhost}/connections?columns=name,user_provided_name`,
      );
      return new Map(connections.map((c) => [c.name, c.user_provided_name]));
    },
  };
}
