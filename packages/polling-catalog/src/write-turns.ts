import { createHash } from "node:crypto";
import type { Logger } from "@x/core";
import type { Channel, ChannelModel, ConsumeMessage } from "amqplib";

/** Ends a write's turn, so that the next agent waiting for the table may write. Never throws. */
export type EndTurn = () => void;

/**
 * The arguments of every turn queue. Only the queue's single active consumer gets messages, so only one agent
 * holds a turn at a time; the next consumer, in the order they subscribed, becomes active when it cancels.
 * A token is published with each request for a turn; `x-max-length` drops the extra ready ones (unacknowledged
 * ones do not count), and a queue nobody used for an hour is deleted by the broker.
 */
const queueArguments = {
  "x-single-active-consumer": true,
  "x-max-length": 1,
  "x-overflow": "reject-publish",
  "x-expires": 3_600_000,
};

/** Queue names are at most 255 bytes; longer readable names are replaced by a hash. */
const maxQueueNameBytes = 255;

/**
 * The broker queue that hands round the turns of the writes to `table` of the catalog at `catalogUrl`: every
 * agent of that catalog names the same queue. Readable when it fits, hashed when it does not.
 *
 * @param catalogUrl - the catalog's base URL, e.g. `https://host/ermrest/catalog/1`
 * @param table - the table the writes go to (see `writeTable`)
 */
export function turnQueueName(catalogUrl: string, table: string): string {
  const readable = `x-polling-catalog.write-turns ${catalogUrl} ${table}`;
  if (Buffer.byteLength(readable) <= maxQueueNameBytes) return readable;
  const hash = createHash("sha256").update(`${catalogUrl}\n${table}`).digest("hex");
  return `x-polling-catalog.write-turns ${hash}`;
}

/**
 * Turns to write, handed round by the AMQP broker that carries the change notices (`writePacing: "turns"`).
 *
 * On ERMrest every write to a table is rolled back when another write to that table commits while it runs, and
 * agents that only see commits (the notices) cannot see a write that has started: paced at random, they trade
 * rollbacks for wall time (about 15 % rolled back costs 7 times the unpaced wall time with 20 agents). A turn
 * instead makes the agents' writes to one table one at a time, in the order they asked, through a queue with a
 * single active consumer on the broker they already use: an agent subscribes when it wants to write, writes
 * once the broker delivers it a token, then cancels its subscription and gives the token back. An agent that
 * dies holding a turn loses its connection, and the broker hands the turn on.
 *
 * Turns never make a write fail: when the broker refuses the queue or the channel breaks, {@link WriteTurns.take}
 * resolves with `undefined` and the write goes at once; the next take opens a new channel.
 */
export class WriteTurns {
  readonly #connection: ChannelModel;
  readonly #logger: Logger;
  #channel: Promise<Channel> | undefined;
  /** Queues declared on the current channel. */
  #declared = new Set<string>();
  /** Takes waiting for a delivery on the current channel: called with `undefined` when it breaks. */
  readonly #waiting = new Set<(turn: undefined) => void>();
  #closed = false;
  #warned = false;

  /**
   * @param connection - an open AMQP connection, owned by the caller (closing it ends every turn)
   * @param logger - the first failure is logged at warn, later ones at debug
   */
  constructor(connection: ChannelModel, logger: Logger) {
    this.#connection = connection;
    this.#logger = logger;
  }

  /**
   * Waits for this client's turn to write through `queue` (see {@link turnQueueName}).
   *
   * @param queue - the turn queue of the table
   * @param signal - aborting it gives up the wait: rejects with `signal.reason`
   * @returns the function that ends the turn, or `undefined` when turns cannot be had now (write at once)
   */
  async take(queue: string, signal?: AbortSignal): Promise<EndTurn | undefined> {
    signal?.throwIfAborted();
    if (this.#closed) return undefined;
    let channel: Channel;
    try {
      channel = await this.#open();
      if (!this.#declared.has(queue)) {
        await channel.assertQueue(queue, { durable: false, autoDelete: false, arguments: queueArguments });
        this.#declared.add(queue);
      }
      channel.sendToQueue(queue, Buffer.from("turn"));
    } catch (error) {
      this.#failed(error);
      return undefined;
    }
    signal?.throwIfAborted();
    return this.#await(channel, queue, signal);
  }

  /** Gives up every wait (they resolve with `undefined`); later takes resolve with `undefined`. */
  close(): void {
    this.#closed = true;
    this.#broken();
  }

  #await(channel: Channel, queue: string, signal: AbortSignal | undefined): Promise<EndTurn | undefined> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let consumerTag: string | undefined;
      let cancelWanted = false;
      const cancel = () => {
        if (consumerTag === undefined) cancelWanted = true;
        else channel.cancel(consumerTag).catch(() => {});
      };
      const giveBack = (message: ConsumeMessage) => {
        try {
          channel.nack(message, false, true);
        } catch {
          // the channel is gone: the broker has requeued the token already
        }
      };
      const finish = () => {
        settled = true;
        this.#waiting.delete(onBroken);
        signal?.removeEventListener("abort", onAbort);
      };
      const onBroken = () => {
        if (settled) return;
        finish();
        resolve(undefined);
      };
      const onAbort = () => {
        if (settled) return;
        finish();
        cancel();
        reject(signal?.reason);
      };
      const onMessage = (message: ConsumeMessage | null) => {
        if (message === null) {
          // the broker cancelled the consumer (the queue was deleted): write at once, declare again next time
          this.#declared.delete(queue);
          onBroken();
          return;
        }
        if (settled) {
          giveBack(message);
          return;
        }
        finish();
        // cancel before giving the token back: the next consumer becomes active only once we are gone
        resolve(() => {
          if (consumerTag === undefined) return;
          channel.cancel(consumerTag).then(
            () => giveBack(message),
            () => {},
          );
        });
      };
      this.#waiting.add(onBroken);
      signal?.addEventListener("abort", onAbort, { once: true });
      channel.consume(queue, onMessage, { noAck: false }).then(
        (ok) => {
          consumerTag = ok.consumerTag;
          if (cancelWanted) cancel();
        },
        (error: unknown) => {
          this.#failed(error);
          onBroken();
        },
      );
    });
  }

  #open(): Promise<Channel> {
    this.#channel ??= (async () => {
      const channel = await this.#connection.createChannel();
      const onGone = (error?: unknown) => {
        if (error !== undefined) this.#failed(error);
        this.#broken();
      };
      channel.on("error", onGone);
      channel.on("close", () => onGone());
      await channel.prefetch(1);
      return channel;
    })();
    const opening = this.#channel;
    opening.catch(() => {
      if (this.#channel === opening) this.#channel = undefined;
    });
    return opening;
  }

  /** The channel broke: waits resolve with `undefined`, and the next take opens a new channel. */
  #broken(): void {
    this.#channel = undefined;
    this.#declared = new Set();
    for (const resolve of [...this.#waiting]) resolve(undefined);
  }

  #failed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (this.#warned) {
      this.#logger.debug({ error: message }, "Write turns unavailable; writing at once.");
      return;
    }
    this.#warned = true;
    this.#logger.warn({ error: message }, "Write turns unavailable on the AMQP broker; writing at once.");
  }
}
