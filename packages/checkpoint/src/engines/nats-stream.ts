import { durationMs, v } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "../errors.js";
import type { BrokerEngine, BrokerSession, BrokerStream, SessionStart } from "./broker-stream.js";
import {
  checkPositionOf,
  count,
  parseStreamOptions,
  type StreamOptions,
  streamOf,
  streamOptionFields,
  timePosition,
} from "./stream-options.js";

/** The part of a JetStream message that the adapter reads: its stream sequence, its position. */
export interface NatsStreamMessage {
  /** The message's sequence in the stream. */
  readonly seq: number;
}

/** The messages of one `consume()` of an ordered consumer, as `@nats-io/jetstream` 3 returns them. */
export interface NatsConsumerMessages<M> extends AsyncIterable<M> {
  /** Messages the client received from the server for this `consume()`, read or not. */
  getReceived(): number;
  /** Stops pulling: the server sends no more messages to this `consume()`. */
  close(): Promise<unknown>;
}

/**
 * The part of a `@nats-io/jetstream` 3 `JetStreamClient` (`jetstream(nc)`) that the adapter uses: ordered
 * consumers, created with `consumers.get(stream, options)`.
 */
export interface NatsJetStream<M extends NatsStreamMessage> {
  consumers: {
    get(
      stream: string,
      options: {
        filter_subjects?: string | string[];
        deliver_policy: "all" | "by_start_sequence" | "by_start_time";
        opt_start_seq?: number;
        opt_start_time?: string;
      },
    ): Promise<{
      consume(options: { max_messages: number; expires: number }): Promise<NatsConsumerMessages<M>>;
      /** Deletes the consumer on the server (`@nats-io/jetstream` 3), which pause, seek and close do. */
      delete?(): Promise<unknown>;
    }>;
  };
}

/** Where a {@link natsStream} starts when no position was sought. */
export type NatsStreamStart = "first" | { seq: number } | { time: Date };

/** Options of {@link natsStream}. */
export interface NatsStreamOptions<M extends NatsStreamMessage> extends StreamOptions {
  /** A JetStream client, `jetstream(nc)`, on a connection that reconnects (`maxReconnectAttempts: -1`). Required. */
  js: NatsJetStream<M>;
  /** The JetStream stream's name. Required. */
  stream: string;
  /** Only messages on these subjects (wildcards allowed). Default all of the stream's subjects. */
  filterSubjects?: string | string[];
  /** Where to start: `"first"`, `{ seq }` (inclusive) or `{ time }` (the first message stored at or after it). Default `"first"`. */
  from?: NatsStreamStart;
  /** Messages the client asks for at a time, and so at most buffers (`max_messages` of `consume()`). Default 500. */
  batchSize?: number;
  /**
   * How long one pull request lasts (`expires` of `consume()`), in ms, at least 1 000. The client notices a
   * lost server by missed heartbeats, at half this period, so it also bounds how long a restart goes
   * unnoticed. Default 5 000.
   */
  pullExpiresMs?: number;
}

const sequence = v.number().int().min(1);

const schema = v.strictObject({
  js: v.custom<NatsJetStream<NatsStreamMessage>>(
    (value) =>
      typeof value === "object" &&
      value !== null &&
      typeof (value as NatsJetStream<NatsStreamMessage>).consumers?.get === "function",
    { error: "a JetStream client: jetstream(nc) from @nats-io/jetstream" },
  ),
  stream: v.string({ error: "a non-empty string" }).min(1, { error: "a non-empty string" }),
  filterSubjects: v.union([v.string().min(1), v.array(v.string().min(1)).min(1)]).optional(),
  from: v
    .union([v.literal("first"), v.strictObject({ seq: sequence }), timePosition], {
      error: '"first", { seq: integer ≥ 1 } or { time: Date }',
    })
    .default("first"),
  batchSize: count(100_000).default(500),
  pullExpiresMs: durationMs({ min: 1_000 }).default(5_000),
  ...streamOptionFields,
});

/**
 * A NATS JetStream stream as the pausable, seekable dependent of a `Checkpoint`, read through an ordered
 * consumer that the adapter creates at the position after the last message handed out; stream sequences
 * are the positions. A pause closes the consumer and deletes it on the server, so the server stops sending;
 * a seek is a new ordered consumer at the sequence; close deletes the last one. This needs no server-side
 * pause or reset API, so it works on nats-server 2.9.
 *
 * @example
 * ```ts
 * import { jetstream } from "@nats-io/jetstream";
 * import { connect } from "@nats-io/transport-node";
 * import { natsStream } from "@x/checkpoint/nats";
 * const nc = await connect({ servers: "127.0.0.1:4222", maxReconnectAttempts: -1 });
 * const orders = natsStream({ js: jetstream(nc), stream: "ORDERS" });
 * for await (const order of orders) await cp.checkPulse(order.time, { position: orders.position });
 * ```
 *
 * @throws `ERR_X_CHECKPOINT_INVALID_OPTION` for a bad option, naming it
 */
export function natsStream<M extends NatsStreamMessage>(
  options: NatsStreamOptions<M>,
): BrokerStream<M, number> {
  const parsed = parseStreamOptions(schema, options);
  return streamOf(new NatsEngine<M>({ ...parsed, js: options.js }), parsed);
}

class NatsEngine<M extends NatsStreamMessage> implements BrokerEngine<M, number> {
  readonly #options: Omit<v.Output<typeof schema>, "js"> & { js: NatsJetStream<M> };
  readonly describe: string;

  constructor(options: Omit<v.Output<typeof schema>, "js"> & { js: NatsJetStream<M> }) {
    this.#options = options;
    this.describe = `JetStream stream ${JSON.stringify(options.stream)}`;
  }

  positionOf(message: M): number {
    return message.seq;
  }

  checkPosition(position: unknown): asserts position is number {
    checkPositionOf(sequence.safeParse(position).success, position, "a stream sequence, an integer ≥ 1");
  }

  async open(start: SessionStart<number>): Promise<BrokerSession<M>> {
    const { js, stream, filterSubjects, batchSize, pullExpiresMs } = this.#options;
    const consumer = await js.consumers
      .get(stream, {
        ...(filterSubjects === undefined ? {} : { filter_subjects: filterSubjects }),
        ...this.#policy(start),
      })
      .catch((cause: unknown) => {
        if ((cause as { status?: unknown }).status !== 404) throw cause;
        throw new CheckpointError(
          ErrorCode.NOT_A_STREAM,
          `JetStream has no stream ${JSON.stringify(stream)}`,
          {
            cause,
          },
        );
      });
    const remove = async () => {
      await consumer.delete?.().catch(() => {}); // on a lost connection the server's inactivity timer does it
    };
    const messages = await consumer
      .consume({ max_messages: batchSize, expires: Math.round(pullExpiresMs) })
      .catch(async (error: unknown) => {
        await remove();
        throw error;
      });
    const iterator = messages[Symbol.asyncIterator]();
    let reading: Promise<unknown> | undefined;
    return {
      get delivered() {
        return messages.getReceived();
      },
      async read() {
        const next = iterator.next();
        reading = next;
        const result = await next;
        if (result.done) throw new Error("the JetStream consumer stopped");
        return [result.value];
      },
      async close() {
        // close() resolves once the iteration has ended: end it, after the read in flight (which close() ends).
        const closing = messages.close();
        await reading?.catch(() => {});
        await iterator.return?.();
        await closing;
        await remove();
      },
    };
  }

  #policy(start: SessionStart<number>) {
    if (start && "at" in start)
      return { deliver_policy: "by_start_sequence", opt_start_seq: start.at } as const;
    if (start) return { deliver_policy: "by_start_sequence", opt_start_seq: start.after + 1 } as const;
    const from = this.#options.from;
    if (from === "first") return { deliver_policy: "all" } as const;
    if ("seq" in from) return { deliver_policy: "by_start_sequence", opt_start_seq: from.seq } as const;
    return { deliver_policy: "by_start_time", opt_start_time: from.time.toISOString() } as const;
  }
}
