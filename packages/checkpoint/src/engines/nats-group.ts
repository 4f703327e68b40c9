import { randomUUID } from "node:crypto";
import type { Logger } from "@x/core";
import { CheckpointError, ErrorCode } from "../errors.js";
import type { BrokerSession, GroupControl } from "./broker-stream.js";

/** A message as a group member reads it: its stream sequence, and its acknowledgements. */
export interface NatsGroupMessage {
  /** The message's sequence in the stream. */
  readonly seq: number;
  /** Acknowledges the message: the group's consumer does not deliver it again. */
  ack(): void;
  /** Gives the message back: the group's consumer delivers it again at once, to some member. */
  nak(): void;
}

/** A message of the group's own stream, as `jsm.streams.getMessage()` returns it. */
interface StoredMessage {
  readonly seq: number;
  readonly time: Date;
  string(): string;
}

/** The messages of one `fetch()` of a durable pull consumer (`@nats-io/jetstream` 3). */
interface FetchedMessages<M> extends AsyncIterable<M> {
  close(): Promise<unknown>;
}

/**
 * The part of a `@nats-io/jetstream` 3 `JetStreamManager` (`await js.jetstreamManager()`) that a group uses:
 * the group's own stream, which holds its pause flag and replay point, and the group's durable consumer.
 */
export interface NatsGroupManager {
  streams: {
    add(config: { name: string; subjects: string[]; max_msgs_per_subject: number }): Promise<unknown>;
    info(stream: string): Promise<{ config: { subjects?: string[] } }>;
    getMessage(stream: string, query: { last_by_subj: string }): Promise<StoredMessage | null>;
  };
  consumers: {
    info(
      stream: string,
      name: string,
    ): Promise<{
      created: string;
      config: { deliver_policy: string; opt_start_seq?: number };
      /** Every message up to this stream sequence is acknowledged. */
      ack_floor?: { stream_seq: number };
    }>;
    add(stream: string, config: object): Promise<unknown>;
    delete(stream: string, name: string): Promise<unknown>;
  };
}

/** The part of a `@nats-io/jetstream` 3 `JetStreamClient` that a group uses, besides its consumers. */
export interface NatsGroupClient<M> {
  jetstreamManager(): Promise<NatsGroupManager>;
  publish(
    subject: string,
    payload: string,
    options?: { expect: { lastSubjectSequence: number } },
  ): Promise<{ seq: number }>;
  consumers: {
    get(
      stream: string,
      name: string,
    ): Promise<{ fetch?(options: FetchOptions): Promise<FetchedMessages<M>> }>;
  };
}

interface FetchOptions {
  max_messages: number;
  expires: number;
}

/** How a group reads one JetStream stream: the settings `natsStream`'s `group` option resolves to. */
export interface NatsGroupSettings {
  /** The group's name: its durable consumer's, and part of its own stream's. */
  name: string;
  /** This member's name, which the pause flag records. */
  consumer: string;
  /** How long a message delivered to a member may stay unacknowledged before the server redelivers it, in ms. */
  ackWaitMs: number;
  /** The consumer's `filter_subject`; all of the stream's subjects when undefined. */
  filterSubject: string | undefined;
  /** How long the group's pause outlives the last member that keeps it (it renews it while paused), in ms. */
  pauseLeaseMs: number;
}

/** The group's pause flag, and the downtime it belongs to, as the `paused` subject holds it (JSON). */
interface Pause {
  /** The downtime's name, drawn by the pause that started it. */
  name: string;
  /** The member that last set or renewed the flag, and when (ISO 8601). */
  member: string;
  time: string;
  /** The earliest record a pausing member was at; none when no member said. */
  from?: number;
  /** How the downtime ended: the first resume, or a lapse of the pause. Paused while undefined. */
  ended?: "resumed" | "lapsed";
}

/** Where a new group's consumer starts: a `deliver_policy` and its argument. */
export type NatsGroupStart =
  | { deliver_policy: "all" }
  | { deliver_policy: "by_start_sequence"; opt_start_seq: number }
  | { deliver_policy: "by_start_time"; opt_start_time: string };

/** The JetStream API error code of a publish whose expected last sequence of the subject does not hold. */
const WRONG_LAST_SEQUENCE = 10071;
/** The JetStream API error code of a consumer that does not exist. */
const CONSUMER_NOT_FOUND = 10014;
/** How many times a seek recreates the group's consumer before it gives up (members creating it meanwhile). */
const SEEK_ATTEMPTS = 5;

/**
 * A consumer group on one JetStream stream, as one member sees it: the group's durable pull consumer (named
 * after the group), and the group's own stream `CHECKPOINT_<stream>_<group>`, one message per subject
 * `$CHECKPOINT.<stream>.<group>.{paused,replay}`: the pause flag and its downtime (the member that set or
 * renewed it, and when; the downtime's name, the earliest record a pausing member was at, whether it ended),
 * which every member reads before each fetch and each paused member republishes every third of
 * `pauseLeaseMs`; and where the group last replayed from, in which downtime.
 */
export class NatsGroup<M extends NatsGroupMessage> implements GroupControl<number> {
  readonly #js: NatsGroupClient<M>;
  readonly #stream: string;
  readonly #settings: NatsGroupSettings;
  readonly #own: string;
  readonly #logger: Logger;
  readonly #subject: (key: "paused" | "replay") => string;
  #manager: Promise<NatsGroupManager> | undefined;
  /** Renews the flag while this member is paused. */
  #renewal: NodeJS.Timeout | undefined;
  /** The live flag this member last saw, and since when (on its own clock, so no two clocks need agree). */
  #seen: { seq: number; since: number } | undefined;

  constructor(js: NatsGroupClient<M>, stream: string, settings: NatsGroupSettings, logger: Logger) {
    this.#js = js;
    this.#stream = stream;
    this.#settings = settings;
    this.#logger = logger;
    this.#own = groupStreamName(stream, settings.name);
    this.#subject = (key) => `$CHECKPOINT.${stream}.${settings.name}.${key}`;
  }

  /**
   * Creates the group's own stream and its durable consumer, starting at `start`, unless they exist. Rejects
   * with the client's error when the stream to read does not exist (its API error code 10059).
   */
  async create(start: NatsGroupStart): Promise<void> {
    const manager = await this.#jsm();
    const existing = await this.#consumerInfo(manager); // rejects first when the stream does not exist
    const subject = this.#subject("paused").replace(/paused$/, "*");
    await manager.streams
      .add({ name: this.#own, subjects: [subject], max_msgs_per_subject: 1 })
      .catch(async (error: unknown) => {
        // it exists (another member created it, with the defaults of another client): usable if it is the group's
        const info = await manager.streams.info(this.#own).catch(() => {
          throw error;
        });
        if (info.config.subjects?.includes(subject)) return;
        throw new CheckpointError(
          ErrorCode.INVALID_OPTION,
          `the stream ${JSON.stringify(this.#own)} exists and is not the group's (another stream and group make the same name): rename the group`,
          { cause: error },
        );
      });
    if (existing) return;
    await manager.consumers.add(this.#stream, this.#consumerConfig(start)).catch(async (error: unknown) => {
      if (!(await this.#consumerInfo(manager))) throw error; // else another member created it first
    });
  }

  /**
   * Whether a member paused the group. A pause whose flag stayed the same message for longer than
   * `pauseLeaseMs` on this member's clock lapsed (every member that kept it died): this member replays the
   * group from the earliest record a pausing member was at, since no member recovered to seek, then ends the
   * downtime with a compare-and-set on the flag's sequence (a member that renewed it meanwhile keeps the group
   * paused; the replay, once per downtime, is not repeated by a second member that sees the lapse).
   */
  async isPaused(): Promise<boolean> {
    for (;;) {
      const stored = await this.#get("paused");
      const pause = stored && readPause(stored);
      if (!pause || pause.ended !== undefined) return false;
      if (this.#seen?.seq !== stored.seq) this.#seen = { seq: stored.seq, since: performance.now() };
      if (performance.now() - this.#seen.since <= this.#settings.pauseLeaseMs) return true;
      if (pause.from !== undefined) await this.seek(pause.from);
      await this.#publish(
        "paused",
        JSON.stringify({ ...pause, ended: "lapsed" } satisfies Pause),
        stored.seq,
      );
    }
  }

  /**
   * Pauses every member: sets the flag, naming this member, or renews it when another member set it, and
   * renews it every third of `pauseLeaseMs` until {@link NatsGroup.resume} or {@link NatsGroup.close}. A new
   * flag starts a downtime; one that lapsed and nobody ended yet is continued. The flag keeps the earliest
   * record a pausing member was at, in the same compare-and-set as the flag itself.
   *
   * @param at - the sequence of the record this member was at (the one whose pulse found the dependency down)
   */
  async pause(at?: number): Promise<void> {
    for (;;) {
      const stored = await this.#get("paused");
      const pause = stored && readPause(stored);
      const from = [pause?.ended === undefined ? pause?.from : undefined, at].filter(
        (seq) => seq !== undefined,
      );
      const next: Pause = {
        name: pause && pause.ended === undefined ? pause.name : randomUUID(),
        ...this.#stamp(),
        ...(from.length === 0 ? {} : { from: Math.min(...from) }),
      };
      if ((await this.#publish("paused", JSON.stringify(next), stored?.seq ?? 0)) !== undefined) break;
    }
    this.#renew();
  }

  /** Lets every member read again: ends the downtime. */
  async resume(): Promise<void> {
    this.close();
    for (;;) {
      const stored = await this.#get("paused");
      const pause = stored && readPause(stored);
      if (!pause || pause.ended !== undefined) return;
      const ended = JSON.stringify({ ...pause, ended: "resumed" } satisfies Pause);
      if ((await this.#publish("paused", ended, stored.seq)) !== undefined) return;
    }
  }

  /**
   * Moves the group back so that the message at `seq` is delivered again, or the message where the earliest
   * pausing member of the downtime was, when that is earlier (a member that died before it recovered does not
   * seek). Once per downtime: within a downtime only further back, since every recovering member seeks and
   * the group must replay once, from the earliest point; in a new downtime never behind the last replay, since
   * a member that restarts with an old downtime in its cache seeks to where it was then. The replay point is
   * written with a compare-and-set on its subject's last sequence, then the group's consumer is recreated at
   * it (unless it was, since that point was written).
   */
  async seek(seq: number): Promise<void> {
    // Recreating the consumer forgets what it delivered and nobody acknowledged (a dead member's batch): the
    // replay starts no later than the first such message, at the cost of replaying acknowledged ones after it.
    const info = await this.#consumerInfo(await this.#jsm());
    // (a consumer that a replay created at a sequence delivered nothing before it)
    const unacknowledged =
      info?.ack_floor === undefined
        ? seq
        : Math.max(info.ack_floor.stream_seq + 1, info.config.opt_start_seq ?? 0);
    for (;;) {
      const pause = await this.#get("paused");
      const { name, from } = (pause && readPause(pause)) ?? { name: "" };
      const target = Math.min(seq, from ?? seq, unacknowledged);
      const stored = await this.#get("replay");
      const last = stored && (JSON.parse(stored.string()) as { downtime: string; seq: number });
      // no further back: the group replays from the point written, which a seek that failed may not have reached
      if (last && last.downtime === name && last.seq <= target) break;
      if (last && last.downtime !== name && target < last.seq) return;
      const replay = JSON.stringify({ downtime: name, seq: target });
      if ((await this.#publish("replay", replay, stored?.seq ?? 0)) !== undefined) break;
    }
    await this.#moveConsumer();
  }

  /** Stops renewing the flag: it lapses unless another paused member renews it. */
  close(): void {
    clearInterval(this.#renewal);
    this.#renewal = undefined;
  }

  /**
   * A read session of this member on the group's consumer: each read is one fetch of up to `batchSize`
   * messages, handed out as they arrive; a batch is acknowledged when the next one is read, or at close as far
   * as it was handed out (the rest is given back, for another member or the next session).
   */
  session(batchSize: number, expiresMs: number, logger: Logger): BrokerSession<M> {
    const options = { max_messages: batchSize, expires: Math.round(expiresMs) };
    // looked up at the first fetch: a member that another member paused opens sessions without reading
    let consumer: Awaited<ReturnType<NatsGroupClient<M>["consumers"]["get"]>> | undefined;
    return new GroupSession<M>(
      async () => {
        consumer ??= await this.#js.consumers.get(this.#stream, this.#settings.name);
        if (!consumer.fetch) throw new TypeError("the JetStream client's consumers have no fetch()");
        return consumer.fetch(options);
      },
      (error) => logger.warn({ error, stream: this.#stream }, "acknowledging handed-out messages failed"),
    );
  }

  /** Republishes the flag every third of `pauseLeaseMs`, while it is set and live (else nothing). */
  #renew(): void {
    clearInterval(this.#renewal);
    let renewing = false;
    this.#renewal = setInterval(async () => {
      if (renewing) return;
      renewing = true;
      try {
        const stored = await this.#get("paused");
        const pause = stored && readPause(stored);
        if (pause && pause.ended === undefined)
          await this.#publish("paused", JSON.stringify({ ...pause, ...this.#stamp() }), stored.seq);
      } catch (error) {
        this.#logger.debug({ error }, "renewing the group's pause failed");
      } finally {
        renewing = false;
      }
    }, this.#settings.pauseLeaseMs / 3);
    this.#renewal.unref();
  }

  /** Who set or renews the flag, and when: this member, now. */
  #stamp(): Pick<Pause, "member" | "time"> {
    return { member: this.#settings.consumer, time: new Date().toISOString() };
  }

  /**
   * Recreates the group's consumer at the last replay point, until it was created after that point was
   * written: a member that found it missing meanwhile (deleted) may have created it at the adapter's `from`,
   * and a concurrent seek at another point may have moved it.
   */
  async #moveConsumer(): Promise<void> {
    const manager = await this.#jsm();
    for (let attempt = 0; attempt < SEEK_ATTEMPTS; attempt++) {
      const stored = await this.#get("replay");
      if (!stored) return;
      const { seq } = JSON.parse(stored.string()) as { seq: number };
      const info = await this.#consumerInfo(manager);
      if (
        info &&
        info.config.opt_start_seq === seq &&
        new Date(info.created).getTime() >= stored.time.getTime()
      )
        return;
      await manager.consumers.delete(this.#stream, this.#settings.name).catch(() => {});
      await manager.consumers
        .add(this.#stream, this.#consumerConfig({ deliver_policy: "by_start_sequence", opt_start_seq: seq }))
        .catch(() => {}); // created meanwhile: looked at again
    }
    throw new Error(`the consumer ${JSON.stringify(this.#settings.name)} kept being recreated meanwhile`);
  }

  #consumerConfig(start: NatsGroupStart) {
    const { name, ackWaitMs, filterSubject } = this.#settings;
    return {
      durable_name: name,
      ack_policy: "explicit",
      ack_wait: Math.round(ackWaitMs) * 1_000_000,
      ...start,
      ...(filterSubject === undefined ? {} : { filter_subject: filterSubject }),
    };
  }

  async #consumerInfo(manager: NatsGroupManager) {
    try {
      return await manager.consumers.info(this.#stream, this.#settings.name);
    } catch (error) {
      if ((error as { code?: unknown }).code === CONSUMER_NOT_FOUND) return undefined;
      throw error;
    }
  }

  /** The last message on one of the group's subjects; null when there is none. */
  async #get(key: "paused" | "replay"): Promise<StoredMessage | null> {
    return (await this.#jsm()).streams.getMessage(this.#own, { last_by_subj: this.#subject(key) });
  }

  /**
   * Publishes `payload` on one of the group's subjects if the subject's last sequence is `expected` (0: no
   * message); resolves the new message's sequence, or undefined when the subject had moved on.
   */
  async #publish(key: "paused" | "replay", payload: string, expected: number): Promise<number | undefined> {
    try {
      return (
        await this.#js.publish(this.#subject(key), payload, { expect: { lastSubjectSequence: expected } })
      ).seq;
    } catch (error) {
      if ((error as { code?: unknown }).code === WRONG_LAST_SEQUENCE) return undefined;
      throw error;
    }
  }

  #jsm(): Promise<NatsGroupManager> {
    this.#manager ??= this.#js.jetstreamManager().catch((error: unknown) => {
      this.#manager = undefined;
      throw error;
    });
    return this.#manager;
  }
}

/** The pause a message of the group's `paused` subject holds. */
function readPause(message: StoredMessage): Pause {
  return JSON.parse(message.string()) as Pause;
}

/** The name of the stream that holds the pause flag and replay point of `group` on `stream`. */
export function groupStreamName(stream: string, group: string): string {
  return `CHECKPOINT_${stream}_${group}`;
}

class GroupSession<M extends NatsGroupMessage> implements BrokerSession<M> {
  readonly #fetch: () => Promise<FetchedMessages<M>>;
  readonly #failedAck: (error: unknown) => void;
  /** The fetch in progress, and the pump that moves its messages to `#arrived`. */
  #messages: FetchedMessages<M> | undefined;
  #pump: Promise<void> | undefined;
  #arrived: M[] = [];
  #fetchEnded = false;
  #failure: unknown;
  #wakeUp: (() => void) | undefined;
  /** The last batch, acknowledged when the next one is read. */
  #unacknowledged: readonly M[] = [];
  #reading: Promise<unknown> | undefined;
  #closed = false;
  delivered = 0;

  constructor(fetch: () => Promise<FetchedMessages<M>>, failedAck: (error: unknown) => void) {
    this.#fetch = fetch;
    this.#failedAck = failedAck;
  }

  read(): Promise<readonly M[]> {
    const reading = this.#read();
    this.#reading = reading;
    return reading;
  }

  async close(handedOut?: number): Promise<void> {
    this.#closed = true;
    await this.#reading?.catch(() => {});
    const batch = this.#unacknowledged;
    this.#unacknowledged = [];
    const kept = handedOut ?? batch.length;
    await this.#messages?.close().catch(() => {});
    await this.#pump;
    try {
      for (const message of batch.slice(0, kept)) message.ack();
      for (const message of [...batch.slice(kept), ...this.#arrived]) message.nak();
    } catch (error) {
      this.#failedAck(error);
    }
    this.#arrived = [];
  }

  async #read(): Promise<readonly M[]> {
    for (const message of this.#unacknowledged) message.ack();
    this.#unacknowledged = [];
    for (;;) {
      if (this.#arrived.length > 0) {
        const batch = this.#arrived;
        this.#arrived = [];
        this.#unacknowledged = batch;
        return batch;
      }
      if (this.#failure !== undefined) {
        const failure = this.#failure;
        this.#failure = undefined;
        throw failure;
      }
      if (this.#closed) return [];
      if (this.#fetchEnded) {
        this.#fetchEnded = false;
        this.#messages = undefined;
        return []; // the fetch expired: the stream looks at the group's flag before the next
      }
      if (!this.#messages) await this.#startFetch();
      else await new Promise<void>((resolve) => (this.#wakeUp = resolve));
    }
  }

  async #startFetch(): Promise<void> {
    const messages = await this.#fetch();
    this.#messages = messages;
    this.#pump = (async () => {
      try {
        for await (const message of messages) {
          this.delivered++;
          this.#arrived.push(message);
          this.#wake();
        }
      } catch (error) {
        this.#failure = error;
      }
      this.#fetchEnded = true;
      this.#wake();
    })();
  }

  #wake(): void {
    const wakeUp = this.#wakeUp;
    this.#wakeUp = undefined;
    wakeUp?.();
  }
}
