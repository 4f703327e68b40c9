import amqp, { type Channel, type ChannelModel } from "amqplib";
import { closeConnection } from "../close-connection.js";

/**
 * Publishes ERMrest's `change` notices on a fanout exchange. If the connection dies, the next publish
 * reconnects once; a failure of that is swallowed, as ERMrest does.
 */
export class NoticePublisher {
  readonly #url: string;
  readonly #exchange: string;
  #connection: ChannelModel | undefined;
  #channel: Channel | undefined;
  #closed = false;
  /** The exchange did not exist before this publisher declared it: `close()` deletes it. */
  #created = false;

  private constructor(url: string, exchange: string) {
    this.#url = url;
    this.#exchange = exchange;
  }

  /**
   * Connects and declares the exchange (`fanout`, not durable, not auto-deleted); rejects when it cannot. An
   * exchange this call created is deleted again by {@link NoticePublisher.close}; one that existed is left.
   */
  static async open(url: string, exchange: string): Promise<NoticePublisher> {
    const publisher = new NoticePublisher(url, exchange);
    await publisher.#connect(true);
    return publisher;
  }

  /** Publishes one `change` notice with routing key `""` and no properties. Never rejects. */
  async publish(): Promise<void> {
    if (this.#closed) return;
    try {
      if (!this.#channel) await this.#connect();
      this.#channel?.publish(this.#exchange, "", Buffer.from("change"));
    } catch {
      this.#drop();
    }
  }

  /** Drops the connection as a server restart does; the next publish reconnects. Never rejects. */
  async disconnect(): Promise<void> {
    const connection = this.#connection;
    this.#drop();
    if (connection) await closeConnection(connection);
  }

  /** Deletes the exchange if {@link NoticePublisher.open} created it, then closes the connection, ignoring errors. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#created) {
      try {
        if (!this.#channel) await this.#connect();
        await this.#channel?.deleteExchange(this.#exchange);
      } catch {
        // The broker is away: nothing more to clean up.
      }
    }
    const connection = this.#connection;
    this.#drop();
    if (connection) await closeConnection(connection);
  }

  async #connect(first = false): Promise<void> {
    const connection = await amqp.connect(this.#url);
    const lose = () => {
      if (this.#connection === connection) this.#drop();
    };
    connection.on("error", lose);
    connection.on("close", lose);
    try {
      const channel = await connection.createChannel();
      channel.on("error", lose);
      channel.on("close", lose);
      if (first) this.#created = !(await exchangeExists(connection, this.#exchange));
      await channel.assertExchange(this.#exchange, "fanout", { durable: false, autoDelete: false });
      this.#connection = connection;
      this.#channel = channel;
    } catch (error) {
      await closeConnection(connection);
      throw error;
    }
  }

  #drop(): void {
    this.#connection = undefined;
    this.#channel = undefined;
  }
}

/** Whether `exchange` exists, checked on a channel of its own (a failed check closes its channel). */
async function exchangeExists(connection: ChannelModel, exchange: string): Promise<boolean> {
  const probe = await connection.createChannel();
  probe.on("error", () => {});
  try {
    await probe.checkExchange(exchange);
    await probe.close();
    return true;
  } catch {
    return false;
  }
}
