import { parseOptions, v } from "@x/core/internal";
import { checkEach, topology, topologyNames } from "./amqp.js";
import { connectBroker } from "./connect.js";
import { ErrorCode, RmqStorageError } from "./errors.js";
import { brokerOptions } from "./option-schemas.js";
import { checkSecretOptions } from "./secrets.js";

/** Options of {@link deleteTopology}. */
export interface DeleteTopologyOptions {
  /** The broker, `amqp://` or `amqps://`, or the nodes of a cluster. Required. */
  url: string | string[];
  /** The topology's name prefix, as given to the server and the client. Default `""` (the unprefixed names). */
  prefix?: string;
  /**
   * Delete queues that have consumers or hold messages too (their messages are lost; connected servers and
   * clients reconnect and declare what they need again). Default `false`: refuse.
   */
  force?: boolean;
  /** How long to try to reach the broker, in ms; an integer 1…3 600 000. Default 30 000. */
  connectTimeoutMs?: number;
}

/** What {@link deleteTopology} deleted: the names that existed. */
export interface DeletedTopology {
  /** Worker queues and dead-letter queues. */
  queues: string[];
  /** The five direct exchanges and the five dead-letter fanout exchanges. */
  exchanges: string[];
}

const optionsSchema = v.strictObject({
  url: brokerOptions.url,
  prefix: brokerOptions.prefix,
  connectTimeoutMs: brokerOptions.connectTimeoutMs,
  force: v.boolean({ error: "true or false" }).default(false),
});

/**
 * Deletes exactly the exchanges and queues of one topology (the 160 worker queues, the 5 dead-letter
 * queues, the 5 exchanges and the 5 dead-letter exchanges named with `prefix`), and nothing else. Without
 * `force` it first checks every queue, and refuses when one has a consumer or holds messages; the broker
 * checks again as it deletes (`if-unused`, `if-empty`). Names that do not exist are skipped, so it is
 * idempotent.
 *
 * @returns the names it deleted
 * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` (before any I/O), `ERR_X_RMQ_STORAGE_CONNECT`,
 *   `ERR_X_RMQ_STORAGE_IN_USE` naming the queues in use (when the check finds one, nothing is deleted)
 */
export async function deleteTopology(options: DeleteTopologyOptions): Promise<DeletedTopology> {
  checkSecretOptions(options);
  const { url, prefix, force, connectTimeoutMs } = parseOptions(
    optionsSchema,
    options,
    ErrorCode.INVALID_OPTION,
    RmqStorageError,
  );
  const names = topologyNames(topology(prefix));
  const connection = await connectBroker({ url, heartbeatMs: 0, timeoutMs: connectTimeoutMs });
  try {
    const queues = await checkEach(connection, [...names.queues, ...names.deadQueues], (channel, name) =>
      channel.checkQueue(name),
    );
    const busy = [...queues].filter(([, ok]) => ok.consumerCount > 0 || ok.messageCount > 0);
    if (busy.length > 0 && !force) throw inUse(busy.map(([name]) => name));
    const exchanges = await checkEach(connection, names.exchanges, (channel, name) =>
      channel.checkExchange(name),
    );
    const channel = await connection.createChannel();
    channel.on("error", () => {});
    try {
      await Promise.all(
        [...queues.keys()].map((name) =>
          channel.deleteQueue(name, force ? {} : { ifUnused: true, ifEmpty: true }),
        ),
      );
    } catch (cause) {
      // A consumer or a message arrived between the check and the delete: the broker refused.
      if (/PRECONDITION_FAILED/.test(String(cause))) throw inUse([], cause);
      throw cause;
    }
    await Promise.all([...exchanges.keys()].map((name) => channel.deleteExchange(name)));
    await channel.close();
    return { queues: [...queues.keys()], exchanges: [...exchanges.keys()] };
  } finally {
    await connection.close().catch(() => {});
  }
}

function inUse(queues: string[], cause?: unknown): RmqStorageError {
  const named =
    queues.length === 0
      ? "a queue got a consumer or a message while it was being deleted"
      : `${queues.length} queue${queues.length === 1 ? "" : "s"} in use (a consumer, or messages): ${queues.slice(0, 3).join(", ")}${queues.length > 3 ? ", …" : ""}`;
  return new RmqStorageError(
    ErrorCode.IN_USE,
    `not deleting the topology: ${named}; stop the servers and drain the queues, or delete anyway with force (--force)`,
    cause === undefined ? undefined : { cause },
  );
}
