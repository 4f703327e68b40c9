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

  private constructor(url: string, exchange: string) {
    this.#url = url;
    this.#exchange = exchange;
  }

  /** Connects and declares the exchange (`fanout`, not durable, not auto-deleted); rejects when it cannot. */
  static async open(url: string, exchange: string): Promise<NoticePublisher> {
    const publisher = new NoticePublisher(url, exchange);
    await publisher.#connect();
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

  /** Closes the connection, ignoring errors. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const connection = this.#connection;
    this.#drop();
    if (connection) await closeConnection(connection);
  }

  async #connect(): Promise<void> {
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
