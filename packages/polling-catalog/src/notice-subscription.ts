import type { Logger } from "@x/core";
import amqp, { type Channel, type ChannelModel } from "amqplib";
import { closeConnection } from "./close-connection.js";

/** A connection attempt that takes longer than this counts as a failure, in ms. */
const connectTimeoutMs = 10_000;

/** Callbacks of a {@link NoticeSubscription}. */
export interface NoticeHandlers {
  /** One change notice arrived. */
  onNotice(): void;
  /** The subscription died (connection or channel error or close, or a cancelled consumer). Called at most once. */
  onLoss(error: Error): void;
}

/**
 * A live subscription to an ERMrest notice exchange: its own connection, channel and exclusive server-named
 * queue, consumed with `noAck`. Opened by {@link NoticeSubscription.open}; {@link NoticeSubscription.close}
 * is idempotent and never throws.
 */
export class NoticeSubscription {
  readonly #connection: ChannelModel;
  #closed = false;
  /** Whether the bind completed: losses before that fail the bind instead of being reported. */
  #ready = false;
  #earlyLoss: Error | undefined;

  private constructor(connection: ChannelModel) {
    this.#connection = connection;
  }

  /**
   * Binds, in order: connect, open a channel, declare the fanout exchange with ERMrest's flags, declare an
   * exclusive server-named queue, bind it, consume it. A failure at any step closes what was opened and
   * rejects.
   *
   * @param url - the AMQP URL
   * @param exchange - the notice exchange, e.g. `ermrest_changes`
   * @param handlers - notice and loss callbacks
   * @param logger - for the queue name, at debug
   */
  static async open(
    url: string,
    exchange: string,
    handlers: NoticeHandlers,
    logger: Logger,
  ): Promise<NoticeSubscription> {
    const connection = await connectWithin(url, connectTimeoutMs);
    const subscription = new NoticeSubscription(connection);
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
    await closeConnection(this.#connection);
  }

  #lose(error: Error, handlers: NoticeHandlers): void {
    if (this.#closed) return;
    this.#closed = true;
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

/** `amqp.connect` that rejects after `timeoutMs`, closing a connection that arrives too late. */
function connectWithin(url: string, timeoutMs: number): Promise<ChannelModel> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new Error(`AMQP connection attempt took longer than ${timeoutMs} ms`));
    }, timeoutMs);
    amqp.connect(url, { timeout: timeoutMs }).then(
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
