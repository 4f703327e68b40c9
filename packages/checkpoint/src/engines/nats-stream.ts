import { durationMs, optionError, v } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "../errors.js";
import type { BrokerEngine, BrokerSession, BrokerStream, SessionStart } from "./broker-stream.js";
import { Inbox } from "./inbox.js";
import {
  NatsGroup,
  type NatsGroupClient,
  type NatsGroupManager,
  type NatsGroupMessage,
} from "./nats-group.js";
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
 * consumers, created with `consumers.get(stream, options)`; in group mode the group's durable consumer
 * (`consumers.get(stream, name)`), `publish()` and `jetstreamManager()` too.
 */
export interface NatsJetStream<M extends NatsStreamMessage> {
  consumers: {
    get(
      stream: string,
      options:
        | string
        | {
            filter_subjects?: string | string[];
            deliver_policy: "all" | "by_start_sequence" | "by_start_time";
            opt_start_seq?: number;
            opt_start_time?: string;
          },
    ): Promise<{
      consume(options: { max_messages: number; expires: number }): Promise<NatsConsumerMessages<M>>;
      /** Pulls one batch from a durable consumer (group mode). */
      fetch?(options: { max_messages: number; expires: number }): Promise<NatsConsumerMessages<M>>;
      /** Deletes the consumer on the server (`@nats-io/jetstream` 3), which pause, seek and close do. */
      delete?(): Promise<unknown>;
    }>;
  };
  /** Publishes a message (group mode: the group's pause flag and replay point). */
  publish?(
    subject: string,
    payload: string,
    options?: { expect: { lastSubjectSequence: number } },
  ): Promise<{ seq: number }>;
  /** The stream and consumer management API (group mode: the group's stream and durable consumer). */
  jetstreamManager?(): Promise<NatsGroupManager>;
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
  /** Messages the client asks for at a time (`max_messages` of `consume()`); it holds at most twice this. Default 500. */
  batchSize?: number;
  /**
   * How long one pull request lasts (`expires` of `consume()`), in ms, at least 1 000. The client notices a
   * lost server by missed heartbeats, at half this period, so it also bounds how long a restart goes
   * unnoticed. Default 5 000.
   */
  pullExpiresMs?: number;
  /**
   * Read the stream as one member of a consumer group: the members share one durable pull consumer, named
   * after the group, and a pause, a seek and a resume act on the whole group. See the README's *Consumer
   * groups on NATS*. Default none: this process reads every message.
   */
  group?: NatsGroupOptions;
}

/** The `group` option of {@link natsStream}. */
export interface NatsGroupOptions {
  /**
   * The group's name: its durable consumer's name, which every member names. Letters, digits, `-` and `_`.
   * Required.
   */
  name: string;
  /** This member's name, unique in the group (`hostname-1`, say): the pause flag records it. Required. */
  consumer: string;
  /**
   * A message delivered to a member and not acknowledged for this long (the member died) is delivered again,
   * to some member, in ms: the consumer's `ack_wait`, set when the consumer is created (or recreated by a
   * seek). Longer than a member may take to handle one batch. Default 30 000.
   */
  ackWaitMs?: number;
  /**
   * A paused member republishes the group's pause flag every third of this time; when every member that
   * keeps it has died, the other members find the flag unchanged for this long (on their own clocks) and read
   * again (and pause the group again if they find the dependency still down), in ms. Default 10 000.
   */
  pauseLeaseMs?: number;
}

const sequence = v.number().int().min(1);
/** A name that is valid in a consumer's and a stream's name and as a subject token. */
const token = v
  .string({ error: "letters, digits, - and _" })
  .regex(/^[A-Za-z0-9_-]+$/, { error: "letters, digits, - and _" });

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
  group: v
    .strictObject({
      name: token,
      consumer: v.string({ error: "a non-empty string" }).min(1, { error: "a non-empty string" }),
      ackWaitMs: durationMs({ min: 1_000 }).default(30_000),
      pauseLeaseMs: durationMs({ min: 30 }).default(10_000),
    })
    .optional(),
  ...streamOptionFields,
});

/**
 * A NATS JetStream stream as the pausable, seekable dependent of a `Checkpoint`, read through an ordered
 * consumer that the adapter creates at the position after the last message handed out; stream sequences
 * are the positions. A pause closes the consumer and deletes it on the server, so the server stops sending;
 * a seek is a new ordered consumer at the sequence; close deletes the last one. With `group`, the process is
 * one member of a consumer group instead: the members share the group's durable consumer, and a pause, a
 * seek and a resume are the group's. This needs no server-side pause or reset API, so it works on
 * nats-server 2.9.
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
  if (parsed.group) checkGroupMode(parsed);
  return streamOf(new NatsEngine<M>({ ...parsed, js: options.js }), parsed);
}

/** Throws `ERR_X_CHECKPOINT_INVALID_OPTION` for options that group mode cannot take. */
function checkGroupMode(options: v.Output<typeof schema>): void {
  const { js, filterSubjects } = options;
  if (typeof js.publish !== "function" || typeof js.jetstreamManager !== "function")
    throw optionError(
      ErrorCode.INVALID_OPTION,
      "js",
      js,
      "a JetStream client with publish() and jetstreamManager() in group mode",
      CheckpointError,
    );
  if (Array.isArray(filterSubjects) && filterSubjects.length > 1)
    throw optionError(
      ErrorCode.INVALID_OPTION,
      "filterSubjects",
      filterSubjects,
      "one subject in group mode (a consumer has one filter subject on nats-server 2.9)",
      CheckpointError,
    );
}

class NatsEngine<M extends NatsStreamMessage> implements BrokerEngine<M, number> {
  readonly #options: Omit<v.Output<typeof schema>, "js"> & { js: NatsJetStream<M> };
  readonly describe: string;
  readonly group: NatsGroup<M & NatsGroupMessage> | undefined;
  /** Whether the group's stream and consumer were created (or found) at the first open. */
  #grouped = false;

  constructor(options: Omit<v.Output<typeof schema>, "js"> & { js: NatsJetStream<M> }) {
    this.#options = options;
    const { group, stream, filterSubjects } = options;
    const member = group
      ? ` (group ${JSON.stringify(group.name)}, member ${JSON.stringify(group.consumer)})`
      : "";
    this.describe = `JetStream stream ${JSON.stringify(stream)}${member}`;
    this.group =
      group &&
      new NatsGroup(
        options.js as unknown as NatsGroupClient<M & NatsGroupMessage>,
        stream,
        {
          ...group,
          filterSubject: Array.isArray(filterSubjects) ? filterSubjects[0] : filterSubjects,
        },
        options.logger,
      );
  }

  positionOf(message: M): number {
    return message.seq;
  }

  checkPosition(position: unknown): asserts position is number {
    checkPositionOf(sequence.safeParse(position).success, position, "a stream sequence, an integer ≥ 1");
  }

  async open(start: SessionStart<number>): Promise<BrokerSession<M>> {
    const { js, stream, filterSubjects, batchSize, pullExpiresMs, logger } = this.#options;
    if (this.group) {
      // a member reads from the group's consumer, on the server: `from` only places a group that is new
      if (!this.#grouped) await this.group.create(this.#policy(undefined)).catch(notAStream(stream));
      this.#grouped = true;
      return this.group.session(batchSize, pullExpiresMs, logger);
    }
    const consumer = await js.consumers
      .get(stream, {
        ...(filterSubjects === undefined ? {} : { filter_subjects: filterSubjects }),
        ...this.#policy(start),
      })
      .catch(notAStream(stream));
    const remove = async () => {
      await consumer.delete?.().catch(() => {}); // on a lost connection the server's inactivity timer does it
    };
    const messages = await consumer
      .consume({ max_messages: batchSize, expires: Math.round(pullExpiresMs) })
      .catch(async (error: unknown) => {
        await remove();
        throw error;
      });
    // A pump moves what the client received into an inbox, which each read takes whole: a batch per read
    // rather than a read per message. It waits while the inbox holds a batch, so that the client asks the
    // server for more only as the stream hands messages out.
    const inbox = new Inbox<M>();
    const pump = (async () => {
      try {
        for await (const message of messages) {
          inbox.push(message);
          if (inbox.size >= batchSize) await inbox.taken();
        }
        inbox.end(new Error("the JetStream consumer stopped"));
      } catch (error) {
        inbox.end(error);
      }
    })();
    return {
      get delivered() {
        return messages.getReceived();
      },
      read: () => inbox.take(),
      async close() {
        // close() resolves once the iteration has ended: end it, and the pump with it.
        const closing = messages.close();
        inbox.end(new Error("the session is closed"));
        await pump;
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

/** The JetStream API error code of a stream that does not exist. */
const STREAM_NOT_FOUND = 10059;

/** Rethrows a client error, as `ERR_X_CHECKPOINT_NOT_A_STREAM` when the stream does not exist. */
function notAStream(stream: string) {
  return (cause: unknown): never => {
    const { status, code } = cause as { status?: unknown; code?: unknown };
    if (code !== STREAM_NOT_FOUND && status !== 404) throw cause;
    throw new CheckpointError(ErrorCode.NOT_A_STREAM, `JetStream has no stream ${JSON.stringify(stream)}`, {
      cause,
    });
  };
}
