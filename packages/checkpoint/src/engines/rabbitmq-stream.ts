import { v } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "../errors.js";
import type { BrokerEngine, BrokerSession, BrokerStream, SessionStart } from "./broker-stream.js";
import { Inbox } from "./inbox.js";
import {
  checkPositionOf,
  count,
  parseStreamOptions,
  type StreamOptions,
  streamOf,
  streamOptionFields,
  timePosition,
} from "./stream-options.js";

/** A message of a stream queue as amqplib delivers it: `properties.headers["x-stream-offset"]` is its offset. */
export interface AmqpStreamMessage {
  content: Uint8Array;
  properties: { headers?: Record<string, unknown> | undefined; timestamp?: unknown };
}

/** The part of an amqplib 2 `Channel` that the adapter uses. */
export interface AmqpStreamChannel {
  prefetch(count: number): Promise<unknown>;
  consume(
    queue: string,
    onMessage: (message: AmqpStreamMessage | null) => void,
    options: { noAck: boolean; arguments: Record<string, unknown> },
  ): Promise<{ consumerTag: string }>;
  cancel(consumerTag: string): Promise<unknown>;
  ack(message: AmqpStreamMessage, allUpTo?: boolean): void;
  close(): Promise<unknown>;
  on(event: "close" | "error", listener: (error?: unknown) => void): unknown;
}

/** The part of an amqplib 2 connection (`await amqp.connect(url)`) that the adapter uses. */
export interface AmqpStreamConnection {
  createChannel(): Promise<AmqpStreamChannel>;
  close(): Promise<unknown>;
  on(event: "close" | "error", listener: (error?: unknown) => void): unknown;
}

/** Where a {@link rabbitmqStream} starts when no position was sought. */
export type RabbitmqStreamStart = "first" | { offset: number } | { time: Date };

/** Options of {@link rabbitmqStream}. */
export interface RabbitmqStreamOptions extends StreamOptions {
  /**
   * Opens a connection, for example `() => amqp.connect(url, { noDelay: true })` (without `noDelay`, Nagle's
   * algorithm can hold the acknowledgements and a pause's cancel for up to 40 ms). Called at the first read,
   * and again after the connection is lost (amqplib does not reconnect by itself); the stream closes the
   * connections it opened. Required.
   */
  connect: () => Promise<AmqpStreamConnection>;
  /** The stream queue (`x-queue-type: stream`). Required. */
  queue: string;
  /** Where to start: `"first"`, `{ offset }` (inclusive) or `{ time }` (the first chunk at or after it). Default `"first"`. */
  from?: RabbitmqStreamStart;
  /** Unacknowledged messages the broker may send ahead (the prefetch that stream queues require). Default 500. */
  prefetch?: number;
}

const offset = v.number().int().min(0);

const schema = v.strictObject({
  connect: v.custom<() => Promise<AmqpStreamConnection>>((value) => typeof value === "function", {
    error: "a function that opens an amqplib connection: () => amqp.connect(url)",
  }),
  queue: v.string({ error: "a non-empty string" }).min(1, { error: "a non-empty string" }),
  from: v
    .union([v.literal("first"), v.strictObject({ offset }), timePosition], {
      error: '"first", { offset: integer ≥ 0 } or { time: Date }',
    })
    .default("first"),
  prefetch: count(65_535).default(500),
  ...streamOptionFields,
});

/**
 * A RabbitMQ stream queue as the pausable, seekable dependent of a `Checkpoint`, consumed over AMQP 0.9.1
 * (amqplib) with an `x-stream-offset`; stream offsets are the positions. A pause cancels the consumer, so
 * the broker sends nothing more (withholding acknowledgements alone would still let it send a prefetch's
 * worth); a seek consumes again at the offset. A lost connection is opened again with `connect`.
 *
 * @example
 * ```ts
 * import amqp from "amqplib";
 * import { rabbitmqStream } from "@x/checkpoint/rabbitmq-stream";
 * const orders = rabbitmqStream({
 *   connect: () => amqp.connect("amqp://127.0.0.1", { noDelay: true }),
 *   queue: "orders",
 * });
 * for await (const order of orders) await cp.checkPulse(new Date(), { position: orders.position });
 * ```
 *
 * @throws `ERR_X_CHECKPOINT_INVALID_OPTION` for a bad option, naming it
 */
export function rabbitmqStream(options: RabbitmqStreamOptions): BrokerStream<AmqpStreamMessage, number> {
  const parsed = parseStreamOptions(schema, options);
  return streamOf(new RabbitmqEngine(parsed), parsed);
}

/** The offset of a stream queue message, from its `x-stream-offset` header. */
export function streamOffsetOf(message: AmqpStreamMessage): number {
  const value = message.properties.headers?.["x-stream-offset"];
  if (typeof value !== "number") {
    throw new CheckpointError(
      ErrorCode.NOT_A_STREAM,
      "a message without an x-stream-offset header: is the queue a stream queue (x-queue-type: stream)?",
    );
  }
  return value;
}

/**
 * Whether a refused consume is for good: access refused (403), not a stream queue (406 precondition
 * failed), or no such queue (404 "no queue"). A 404 for a queue whose node is down is transient: it happens
 * while a restarted broker is loading its queues.
 */
function refusedForGood(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 403 || code === 406 || (code === 404 && String(message).includes("no queue"));
}

/** `consuming`, with a refusal for good turned into `ERR_X_CHECKPOINT_NOT_A_STREAM`. */
async function refusals<T>(consuming: Promise<T>, queue: string): Promise<T> {
  try {
    return await consuming;
  } catch (cause) {
    if (!refusedForGood(cause)) throw cause;
    throw new CheckpointError(
      ErrorCode.NOT_A_STREAM,
      `RabbitMQ refused to consume ${JSON.stringify(queue)} as a stream queue (x-queue-type: stream): ${(cause as Error).message}`,
      { cause },
    );
  }
}

class RabbitmqEngine implements BrokerEngine<AmqpStreamMessage, number> {
  readonly #options: v.Output<typeof schema>;
  #connection: Promise<AmqpStreamConnection> | undefined;
  readonly describe: string;

  constructor(options: v.Output<typeof schema>) {
    this.#options = options;
    this.describe = `RabbitMQ stream queue ${JSON.stringify(options.queue)}`;
  }

  positionOf(message: AmqpStreamMessage): number {
    return streamOffsetOf(message);
  }

  checkPosition(position: unknown): asserts position is number {
    checkPositionOf(offset.safeParse(position).success, position, "a stream offset, an integer ≥ 0");
  }

  async open(start: SessionStart<number>): Promise<BrokerSession<AmqpStreamMessage>> {
    const connection = await this.#connect();
    const channel = await connection.createChannel();
    const inbox = new Inbox<AmqpStreamMessage>();
    let delivered = 0;
    channel.on("error", (error: unknown) => inbox.end(error));
    channel.on("close", () => inbox.end(new Error("the channel closed")));
    await channel.prefetch(this.#options.prefetch);
    const { consumerTag } = await refusals(
      channel.consume(
        this.#options.queue,
        (message) => {
          if (message === null) return inbox.end(new Error("the broker cancelled the consumer"));
          delivered++;
          inbox.push(message);
        },
        { noAck: false, arguments: { "x-stream-offset": this.#offsetArgument(start) } },
      ),
      this.#options.queue,
    );
    let closed = false;
    // A stream queue needs acknowledgements as credit for the next messages. Acknowledging once a quarter of
    // the prefetch is handed out keeps the broker sending (after half, it waited for credit: 15 % slower,
    // docs/benchmarks/checkpoint-engines.md), with one frame per quarter prefetch, not per read.
    const ackEvery = Math.ceil(this.#options.prefetch / 4);
    let unacknowledged = 0;
    return {
      get delivered() {
        return delivered;
      },
      async read() {
        const batch = await inbox.take();
        unacknowledged += batch.length;
        if (unacknowledged >= ackEvery) {
          channel.ack(batch.at(-1)!, true);
          unacknowledged = 0;
        }
        return batch;
      },
      async close() {
        if (closed) return;
        closed = true;
        const failed = inbox.ended;
        inbox.end(new Error("the session is closed"));
        if (failed) return;
        await channel.cancel(consumerTag);
        await channel.close();
      },
    };
  }

  async close(): Promise<void> {
    const connection = this.#connection;
    this.#connection = undefined;
    await (await connection?.catch(() => undefined))?.close().catch(() => {});
  }

  #connect(): Promise<AmqpStreamConnection> {
    if (this.#connection) return this.#connection;
    const opening = this.#options.connect().then((connection) => {
      const forget = () => {
        if (this.#connection === opening) this.#connection = undefined;
      };
      connection.on("error", forget);
      connection.on("close", forget);
      return connection;
    });
    opening.catch(() => {
      if (this.#connection === opening) this.#connection = undefined;
    });
    this.#connection = opening;
    return opening;
  }

  #offsetArgument(start: SessionStart<number>): unknown {
    if (start && "at" in start) return start.at;
    if (start) return start.after + 1;
    const from = this.#options.from;
    if (from === "first") return "first";
    if ("offset" in from) return from.offset;
    return { "!": "timestamp", value: Math.floor(from.time.getTime() / 1_000) };
  }
}
