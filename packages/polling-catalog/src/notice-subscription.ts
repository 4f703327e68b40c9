import type { Logger } from "@x/core";
import { redactUrl, urlAt } from "@x/core/internal";
import type { Channel, ChannelModel } from "amqplib";
import { closeConnection } from "./close-connection.js";
import { WriteTurns } from "./write-turns.js";

/** amqplib, loaded on the first bind: importing it at startup would cost the package's import time (#31). */
let amqplib: Promise<typeof import("amqplib")> | undefined;

/** A connection attempt that takes longer than this counts as a failure, in ms. */
const connectTimeoutMs = 10_000;

/** Callbacks of a {@link NoticeSubscription}. */
export interface NoticeHandlers {
  /** One change notice arrived. */
  onNotice(): void;
  /** The subscription died (connection or channel error or close, or a cancelled consumer). Called at most once. */
  onLoss(error: Error): void;
}

/** Where and how {@link NoticeSubscription.open} binds. */
export interface BindTarget {
  /** The AMQP URLs, one per broker node (passwords included): tried in turn from `first`. */
  urls: readonly string[];
  /** The index of the address to try first (taken modulo their number). */
  first: number;
  /** The notice exchange, e.g. `ermrest_changes`. */
  exchange: string;
  /** For each failed address and the queue name, at debug. */
  logger: Logger;
  /** Checked before each further address: `true` ends the round (the poll stopped). */
  cancelled: () => boolean;
}

/**
 * A live subscription to an ERMrest notice exchange: its own connection, channel and exclusive server-named
 * queue, consumed with `noAck`. Opened by {@link NoticeSubscription.open}; {@link NoticeSubscription.close}
 * is idempotent and never throws.
 */
export class NoticeSubscription {
  readonly #connection: ChannelModel;
  /** The index, in the target's `urls`, of the address this subscription is bound at. */
  readonly index: number;
  /** That address, its password shown as `***`. */
  readonly url: string;
  /** Turns to write, handed round on this subscription's connection (`writePacing: "turns"`); end with it. */
  readonly turns: WriteTurns;
  #closed = false;
  /** Whether the bind completed: losses before that fail the bind instead of being reported. */
  #ready = false;
  #earlyLoss: Error | undefined;

  private constructor(connection: ChannelModel, index: number, url: string, logger: Logger) {
    this.#connection = connection;
    this.index = index;
    this.url = url;
    this.turns = new WriteTurns(connection, logger);
  }

  /**
   * Binds at the first address that works, trying each once from `target.first` (the next one at once after
   * a failure). At each: connect, open a channel, declare the fanout exchange with ERMrest's flags, declare an
   * exclusive server-named queue, bind it, consume it; a failure at any step closes what was opened. The
   * queue lives on the node of the connection and the exchange on every node of a cluster, so binding again
   * at another node after a loss needs nothing else.
   *
   * @param target - the addresses, where to start, the exchange; see {@link BindTarget}
   * @param handlers - notice and loss callbacks
   * @throws the address's own error when there is one address; with several, an `AggregateError` of every
   *   address's error whose message names each address (its password as `***`) and its reason
   */
  static async open(target: BindTarget, handlers: NoticeHandlers): Promise<NoticeSubscription> {
    const { urls, first, logger } = target;
    const errors: Error[] = [];
    const reasons: string[] = [];
    for (let attempt = 0; attempt < urls.length; attempt++) {
      if (attempt > 0 && target.cancelled()) break;
      const index = (first + attempt) % urls.length;
      const url = urlAt(urls, index);
      try {
        return await NoticeSubscription.#openAt(url, index, target.exchange, handlers, logger);
      } catch (cause) {
        const error = cause instanceof Error ? cause : new Error(String(cause));
        if (urls.length === 1) throw error;
        errors.push(error);
        reasons.push(`${redactUrl(url)}: ${error.message}`);
        logger.debug({ url: redactUrl(url), error: error.message }, "AMQP bind failed at this address.");
      }
    }
    throw new AggregateError(errors, `no AMQP address could be bound (${reasons.join("; ")})`);
  }

  static async #openAt(
    url: string,
    index: number,
    exchange: string,
    handlers: NoticeHandlers,
    logger: Logger,
  ): Promise<NoticeSubscription> {
    const connection = await connectWithin(url, connectTimeoutMs);
    const subscription = new NoticeSubscription(connection, index, redactUrl(url), logger);
    const lose = (error: Error) => subscription.#lose(error, handlers);
    connection.on("error", lose);
    connection.on("close", (error?: Error) => lose(error ?? new Error("AMQP connection closed")));
    try {
      const channel = await connection.createChannel();
      channel.on("error", lose);
      channel.on("close", () => lose(new Error("AMQP channel closed")));
      await subscribe(channel, exchange, handlers, lose, logger);
      if (subscription.#earlyLoss) throw subscription.#earlyLoss;
    } catch (error) {
      await subscription.close();
      throw error;
    }
    subscription.#ready = true;
    return subscription;
  }

  /** Closes the connection, ignoring errors. No loss is reported afterwards. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.turns.close();
    await closeConnection(this.#connection);
  }

  #lose(error: Error, handlers: NoticeHandlers): void {
    if (this.#closed) return;
    this.#closed = true;
    this.turns.close();
    void closeConnection(this.#connection);
    if (this.#ready) handlers.onLoss(error);
    else this.#earlyLoss = error;
  }
}

async function subscribe(
  channel: Channel,
  exchange: string,
  handlers: NoticeHandlers,
  lose: (error: Error) => void,
  logger: Logger,
): Promise<void> {
  await channel.assertExchange(exchange, "fanout", { durable: false, autoDelete: false });
  const { queue } = await channel.assertQueue("", { exclusive: true, durable: false, autoDelete: true });
  await channel.bindQueue(queue, exchange, "");
  await channel.consume(
    queue,
    (message) => {
      if (message === null) lose(new Error("AMQP consumer cancelled by the broker"));
      else handlers.onNotice();
    },
    { noAck: true, exclusive: true },
  );
  logger.debug({ exchange, queue }, "Bound the change-notice queue.");
}

/** amqplib's `connect` that rejects after `timeoutMs`, closing a connection that arrives too late. */
async function connectWithin(url: string, timeoutMs: number): Promise<ChannelModel> {
  amqplib ??= import("amqplib");
  const { connect } = await amqplib;
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new Error(`AMQP connection attempt took longer than ${timeoutMs} ms`));
    }, timeoutMs);
    // noDelay: a write turn is handed on in small frames, which Nagle's algorithm would hold for 40 ms
    connect(url, { timeout: timeoutMs, noDelay: true }).then(
      (connection) => {
        clearTimeout(timer);
        if (late) {
          connection.on("error", () => {});
          void closeConnection(connection);
        } else resolve(connection);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
