import { EventEmitter } from "node:events";
import type { InspectOptions, inspect } from "node:util";
import { Backoff, type Logger, sleep } from "@x/core";
import { durationMs, inspectAs, inspectCustom, parseOptions, v } from "@x/core/internal";
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from "amqplib";
import {
  declareExchanges,
  firstQueueWithoutConsumer,
  type Topology,
  topology,
  topologyNames,
} from "./amqp.js";
import { connectBroker, reconnectBackoff, redactUrls } from "./connect.js";
import { DEFAULT_ITEMS_PER_MESSAGE, DEFAULT_MAX_ITEMS_PER_WRITE, defaultPrefetch } from "./defaults.js";
import { closedError, ErrorCode, RmqStorageError } from "./errors.js";
import { InFlightWindow } from "./in-flight.js";
import { brokerOptions, intIn, renamedOption } from "./option-schemas.js";
import { countKeys, exchangeOf, splitItems } from "./routing.js";
import { checkSecretOptions } from "./secrets.js";
import type {
  DirectoryData,
  EntityType,
  Path,
  ProvenanceResult,
  ProvenanceStorage,
  RelationData,
  RelationType,
  RevisionData,
  Sha1,
  Timestamp,
  WriteMethod,
} from "./types.js";
import { decodeReply, encodeMapRequest, encodeRequest, MAX_ITEMS, type Scratch } from "./wire.js";

/** Options of {@link RmqStorageClient.connect}. */
export interface RmqStorageClientOptions {
  /**
   * The broker, `amqp://` or `amqps://`; or the nodes of a cluster, a list of such URLs: the client connects
   * to the first that answers and, when its connection is lost, moves on to the next one (and republishes
   * what was not confirmed). Required.
   */
  url: string | string[];
  /** Serves every read; should be the database the server writes to. The client never closes it. Required. */
  storage: ProvenanceStorage;
  /**
   * Items per message: each routing key's items of a call are cut into messages of this many (the last one
   * shorter). Integer 1…100 000. Default 1 000 (swh-provenance's `batch_size` was 100: set 100 to get its
   * messages back). The server's `maxItemsPerWrite` caps what it merges into one storage call.
   */
  itemsPerMessage?: number;
  /** A call resolves `false` after this long without progress, at least, in ms; a number > 0. Default 60 000. */
  waitMinMs?: number;
  /** …or after this long per message of the call, if that is longer, in ms; a number ≥ 0. Default 10 000. */
  waitPerBatchMs?: number;
  /** How long to try to reach the broker at connect, in ms; an integer 1…3 600 000. Default 30 000. */
  connectTimeoutMs?: number;
  /**
   * AMQP heartbeat interval, in ms; an integer 0…3 600 000, rounded up to whole seconds (AMQP negotiates
   * heartbeats in seconds), 0 disables heartbeats. A `heartbeat` query parameter of `url` (in seconds, as in
   * swh-provenance) takes precedence. Default 10 000.
   */
  heartbeatMs?: number;
  /** The topology's name prefix (`<prefix>.<name>`, see the server's `prefix`); must match the server's. Default `""`. */
  prefix?: string;
  /** Where the client logs. Default: silent. */
  logger?: Logger;
  /** Aborts the connection attempt. */
  signal?: AbortSignal;
}

/** Options of {@link RmqStorageClient.waitForServer}. */
export interface WaitForServerOptions {
  /** Give up after this long, in ms; an integer ≥ 0. Default 30 000. */
  timeoutMs?: number;
  /** Aborting it rejects the wait with the signal's reason. */
  signal?: AbortSignal;
}

/** The client's events, for metrics. */
export interface ClientEvents {
  /** The broker connection was lost; the next attempt starts after `delayMs` ms. */
  reconnect: [{ attempt: number; delayMs: number }];
  /** A call resolved `false` after T = max(`waitMinMs`, messages × `waitPerBatchMs`) ms without progress. */
  "timed-out": [{ method: string; acknowledged: number; expected: number }];
  /**
   * A call resolved `false`; `error` says why, with a stable code: `ERR_X_RMQ_STORAGE_UNROUTABLE` (no server
   * for this prefix), `…_NACKED`, `…_REJECTED`, `…_TIMED_OUT` or `…_CLOSED`. Never emitted as `error`.
   */
  failed: [{ method: string; error: RmqStorageError }];
}

const storageMethods = [
  "contentAdd",
  "directoryAdd",
  "locationAdd",
  "originAdd",
  "revisionAdd",
  "relationAdd",
  "contentFindFirst",
  "contentFindAll",
  "contentGet",
  "directoryGet",
  "revisionGet",
  "originGet",
  "entityGetAll",
  "locationGetAll",
  "relationGet",
  "relationGetAll",
  "close",
] as const;

const optionsSchema = v.strictObject({
  ...brokerOptions,
  storage: v.custom<ProvenanceStorage>(
    (value) =>
      typeof value === "object" &&
      value !== null &&
      storageMethods.every((name) => typeof (value as Record<string, unknown>)[name] === "function"),
    { error: "a ProvenanceStorage (an object with every storage method)" },
  ),
  itemsPerMessage: intIn("number of items", 1, MAX_ITEMS).default(DEFAULT_ITEMS_PER_MESSAGE),
  batchSize: renamedOption("itemsPerMessage"),
  waitMinMs: durationMs({ exclusiveMin: true }).default(60_000),
  waitPerBatchMs: durationMs().default(10_000),
  signal: v.instanceof(AbortSignal, { error: "an AbortSignal" }).optional(),
});

const waitSchema = v.strictObject({
  timeoutMs: durationMs({ integer: true }).default(30_000),
  signal: v.instanceof(AbortSignal, { error: "an AbortSignal" }).optional(),
});

/** How often {@link RmqStorageClient.waitForServer} looks again: from 50 ms, doubling, at most every second. */
const presenceBackoff = () => new Backoff({ initialMs: 50, factor: 2, maxMs: 1_000, jitter: 0 });

/** Most messages a client keeps published but unconfirmed by the broker: bounds what it buffers. */
const CONFIRM_WINDOW = 256;
/**
 * Most bytes of message bodies a client keeps published but unconfirmed (always at least one message):
 * 256 messages of 100 items, about what {@link CONFIRM_WINDOW} allowed with them, so that 1 000-item
 * messages do not hold ten times as much.
 */
const CONFIRM_WINDOW_BYTES = 2 * 1024 * 1024;
/**
 * Most items a client holds in messages formed and not yet answered by the server, over all its calls: what
 * the servers of the 16 ranges hold at their defaults (16 × `prefetch` 20 × 1 000 items), so that a default
 * deployment is kept busy while a call of any size holds a bounded number of references (≈ 2.5 MB).
 */
export const IN_FLIGHT_ITEMS = 16 * defaultPrefetch(DEFAULT_MAX_ITEMS_PER_WRITE) * DEFAULT_ITEMS_PER_MESSAGE;

interface Message {
  id: string;
  exchange: string;
  routingKey: string;
  /** Its items, counted in the client's {@link InFlightWindow}. */
  items: number;
  /** Encodes the body when (re)published: a pending message holds references, not bytes. */
  body: () => Buffer;
}

interface Call {
  id: string;
  method: string;
  expected: number;
  /** Messages answered by an `ok` reply. */
  answered: number;
  /** Messages formed (published or to be republished) and not yet answered, by message id. */
  pending: Map<string, Message>;
  timeoutMs: number;
  timer: NodeJS.Timeout | undefined;
  resolve: (ok: boolean) => void;
}

interface Link {
  connection: ChannelModel;
  channel: ConfirmChannel;
  replyTo: string;
}

/**
 * A {@link ProvenanceStorage} whose writes go through RabbitMQ to the {@link RmqStorageServer} workers, split
 * by id range, and whose reads go to a local storage. Any number of calls may run at once; each resolves
 * `true` when every one of its messages is confirmed committed, `false` on a returned or nacked message, an
 * error reply, `close()`, or after T = max(`waitMinMs`, messages × `waitPerBatchMs`) ms without progress;
 * {@link RmqStorageClient.lastFailure} and the `failed` event say which.
 */
export class RmqStorageClient extends EventEmitter<ClientEvents> implements ProvenanceStorage {
  readonly #storage: ProvenanceStorage;
  readonly #options: v.Output<typeof optionsSchema>;
  readonly #top: Topology;
  readonly #calls = new Map<string, Call>();
  readonly #closing = new AbortController();
  #link: Link | undefined;
  #closed: Promise<void> | undefined;
  /** Messages published and not yet confirmed by the broker; publishing pauses at {@link CONFIRM_WINDOW}. */
  #unconfirmed = 0;
  /** The bytes of their bodies; publishing also pauses at {@link CONFIRM_WINDOW_BYTES}. */
  #unconfirmedBytes = 0;
  #windowOpen: Array<() => void> = [];
  /** The items of every call's formed, unanswered messages; a write waits for room before forming more. */
  readonly #inFlight = new InFlightWindow(IN_FLIGHT_ITEMS);
  /** Where `content_add` bodies are encoded, one at a time, just before amqplib copies them into frames. */
  readonly #scratch: Scratch = { buffer: Buffer.alloc(0) };
  /** Counts lost connections: each reconnect starts with the next broker address. */
  #turn = 0;
  #lastFailure: RmqStorageError | undefined;

  /** `RmqStorageClient { url, prefix }`, the URL's secrets shown as `***` (see "Redaction" in the README). */
  [inspectCustom](depth: number, options: InspectOptions, insp: typeof inspect): string {
    return inspectAs("RmqStorageClient", this.toJSON(), depth, options, insp);
  }

  /** What `JSON.stringify` shows: the URL with its secrets as `***`, and the prefix. */
  toJSON(): { url: string | string[]; prefix: string } {
    const { url, prefix } = this.#options;
    return { url: redactUrls(url), prefix };
  }

  /**
   * What `String()` shows: `RmqStorageClient amqp://user:***@host/`, its secrets as `***` (several URLs
   * separated by spaces).
   */
  override toString(): string {
    return `RmqStorageClient ${[this.toJSON().url].flat().join(" ")}`;
  }

  private constructor(options: v.Output<typeof optionsSchema>) {
    super();
    this.#options = options;
    this.#storage = options.storage;
    this.#top = topology(options.prefix);
  }

  /**
   * Why the latest write that resolved `false` did (`undefined` before any): an {@link RmqStorageError} whose
   * `code` is `ERR_X_RMQ_STORAGE_UNROUTABLE`, `…_NACKED`, `…_REJECTED`, `…_TIMED_OUT` or `…_CLOSED`, and whose
   * message names the method. With concurrent calls, the `failed` event tells which call failed.
   */
  get lastFailure(): RmqStorageError | undefined {
    return this.#lastFailure;
  }

  /**
   * Validates the options, connects, declares the five exchanges and an exclusive reply queue.
   *
   * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION` (before any connection), `ERR_X_RMQ_STORAGE_CONNECT`
   */
  static async connect(options: RmqStorageClientOptions): Promise<RmqStorageClient> {
    checkSecretOptions(options);
    const parsed = parseOptions(optionsSchema, options, ErrorCode.INVALID_OPTION, RmqStorageError);
    const client = new RmqStorageClient(parsed);
    await client.#connect(parsed.connectTimeoutMs, parsed.signal);
    return client;
  }

  async #connect(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const { url, heartbeatMs, logger } = this.#options;
    const both = signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal;
    const connection = await connectBroker({
      url,
      first: this.#turn,
      heartbeatMs,
      timeoutMs,
      signal: both,
      logger,
    });
    try {
      connection.on("error", (error) => logger.warn({ err: error }, "broker connection error"));
      await declareExchanges(connection, this.#top);
      const channel = await connection.createConfirmChannel();
      channel.on("error", (error) => logger.warn({ err: error }, "broker channel error"));
      const { queue } = await channel.assertQueue("", { exclusive: true, autoDelete: true, durable: false });
      await channel.consume(queue, (message) => message && this.#reply(message), { noAck: true });
      channel.on("return", (message: ConsumeMessage) => this.#returned(message));
      const link: Link = { connection, channel, replyTo: queue };
      this.#link = link;
      channel.once("close", () => this.#lost(link));
      connection.once("close", () => this.#lost(link));
    } catch (error) {
      await connection.close().catch(() => {});
      throw new RmqStorageError(ErrorCode.CONNECT, `cannot set up the client: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /**
   * Resolves once every worker queue of the topology (the 16 ranges of each of the 10 (method, relation)
   * pairs) has a consumer, that is once running servers serve every range. Writes made before that resolve
   * `false` at once when the server has not declared the queues yet, or wait for their timeout when nobody
   * consumes them. {@link RmqStorageServer.start} resolves at the same point, and `x-rmq-storage serve`
   * prints its ready line then; this is the check for a client in another process. It looks with passive
   * declares, every 50 ms at first and then at most every second, and keeps looking through reconnects.
   *
   * @throws `ERR_X_RMQ_STORAGE_NO_SERVER` after `timeoutMs`, naming a queue without a consumer;
   *   `ERR_X_RMQ_STORAGE_CLOSED` when the client is (or gets) closed; the signal's reason when it aborts;
   *   `ERR_X_RMQ_STORAGE_INVALID_OPTION` for a bad option
   */
  async waitForServer(options?: WaitForServerOptions): Promise<void> {
    const { timeoutMs, signal } = parseOptions(
      waitSchema,
      options,
      ErrorCode.INVALID_OPTION,
      RmqStorageError,
    );
    const queues = topologyNames(this.#top).queues;
    const deadline = performance.now() + timeoutMs;
    const wake = signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal;
    const backoff = presenceBackoff();
    let missing = queues[0];
    for (;;) {
      signal?.throwIfAborted();
      if (this.#closed) throw closedError("client", "waitForServer");
      const link = this.#link;
      if (link) {
        missing = await firstQueueWithoutConsumer(link.connection, queues).catch(() => missing);
        if (missing === undefined) return;
      }
      const left = deadline - performance.now();
      if (left <= 0)
        throw new RmqStorageError(
          ErrorCode.NO_SERVER,
          `no server after ${timeoutMs} ms: queue ${missing} has no consumer (is x-rmq-storage serve running, with the same prefix?)`,
        );
      await sleep(Math.min(backoff.next(), left), { signal: wake }).catch(() => {});
    }
  }

  #lost(link: Link): void {
    if (this.#link !== link) return;
    this.#turn++;
    this.#link = undefined;
    link.connection.close().catch(() => {});
    if (this.#closed) return;
    this.#options.logger.warn("broker connection lost; reconnecting");
    void this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    const backoff = reconnectBackoff();
    const signal = this.#closing.signal;
    while (!signal.aborted) {
      const delayMs = backoff.next();
      this.emit("reconnect", { attempt: backoff.attempt, delayMs });
      try {
        await sleep(delayMs, { signal });
        await this.#connect(Math.max(1_000, delayMs), signal);
      } catch (error) {
        if (signal.aborted) return;
        this.#options.logger.warn({ err: error }, "reconnect failed");
        continue;
      }
      // Resend every unconfirmed message of every pending call, with the same ids and the new reply queue.
      for (const call of this.#calls.values())
        for (const message of call.pending.values()) await this.#publish(call, message);
      return;
    }
  }

  #reply(message: ConsumeMessage): void {
    const call = this.#calls.get(String(message.properties.correlationId));
    const reply = decodeReply(message.content);
    if (!call || !reply) return;
    let progress = false;
    for (const id of reply.messageIds) {
      if (!call.pending.has(id)) continue;
      if (!reply.ok) {
        this.#options.logger.error(
          { method: call.method, error: reply.error },
          "the server rejected a message",
        );
        this.#fail(
          call,
          ErrorCode.REJECTED,
          `the server rejected a message: ${reply.error ?? "no reason given"}`,
        );
        return;
      }
      this.#inFlight.release((call.pending.get(id) as Message).items);
      call.pending.delete(id);
      call.answered++;
      progress = true;
    }
    if (!progress) return;
    if (call.answered === call.expected) this.#settle(call, true);
    else this.#arm(call);
  }

  #returned(message: ConsumeMessage): void {
    const call = this.#calls.get(String(message.properties.correlationId));
    if (!call?.pending.has(String(message.properties.messageId))) return;
    const { exchange, routingKey } = message.fields;
    this.#options.logger.error({ method: call.method, routingKey }, "message unroutable: no queue is bound");
    this.#fail(
      call,
      ErrorCode.UNROUTABLE,
      `no queue is bound to exchange ${exchange} for routing key ${routingKey}, so no server received the message: is x-rmq-storage serve running, with prefix ${JSON.stringify(this.#options.prefix)}? (client.waitForServer() waits for one)`,
    );
  }

  #arm(call: Call): void {
    clearTimeout(call.timer);
    call.timer = setTimeout(() => {
      const acknowledged = call.answered;
      this.#options.logger.warn(
        { method: call.method, acknowledged, expected: call.expected },
        "write timed out",
      );
      this.emit("timed-out", { method: call.method, acknowledged, expected: call.expected });
      this.#fail(
        call,
        ErrorCode.TIMED_OUT,
        `no progress for ${call.timeoutMs} ms: ${acknowledged} of ${call.expected} messages committed`,
      );
    }, call.timeoutMs);
  }

  /** Settles `call` `false`, recording why in {@link lastFailure} and the `failed` event. */
  #fail(call: Call, code: ErrorCode, reason: string): void {
    if (!this.#calls.has(call.id)) return;
    const error = new RmqStorageError(code, `${call.method}: ${reason}`);
    this.#lastFailure = error;
    this.#settle(call, false);
    this.emit("failed", { method: call.method, error });
  }

  #settle(call: Call, ok: boolean): void {
    if (!this.#calls.delete(call.id)) return;
    clearTimeout(call.timer);
    for (const message of call.pending.values()) this.#inFlight.release(message.items);
    call.pending.clear();
    this.#inFlight.wake();
    call.resolve(ok);
  }

  async #publish(call: Call, message: Message): Promise<void> {
    while (
      (this.#unconfirmed >= CONFIRM_WINDOW || this.#unconfirmedBytes >= CONFIRM_WINDOW_BYTES) &&
      this.#link &&
      !this.#closed
    )
      await new Promise<void>((resolve) => this.#windowOpen.push(resolve));
    const link = this.#link;
    if (!link || !this.#calls.has(call.id) || !call.pending.has(message.id)) return;
    const { channel } = link;
    const body = message.body();
    const size = body.length;
    let written: boolean;
    try {
      written = this.#send(call, message, link, body);
    } catch (error) {
      // The channel or connection is closing (amqplib throws then): the message stays pending and is resent
      // on the next connection, like every unconfirmed one.
      this.#options.logger.warn({ err: error }, "publish on a closing connection; reconnecting");
      this.#lost(link);
      return;
    }
    this.#unconfirmed++;
    this.#unconfirmedBytes += size;
    if (!written) await drained(channel);
  }

  /** Publishes one message with confirms; throws when the link is closing. */
  #send(call: Call, message: Message, link: Link, body: Buffer): boolean {
    const size = body.length;
    return link.channel.publish(
      message.exchange,
      message.routingKey,
      body,
      {
        mandatory: true,
        persistent: true,
        contentType: "application/json",
        correlationId: call.id,
        messageId: message.id,
        replyTo: link.replyTo,
      },
      (error) => {
        this.#unconfirmed--;
        this.#unconfirmedBytes -= size;
        for (const resume of this.#windowOpen.splice(0)) resume();
        // A closed channel also fails its unconfirmed messages: those are resent after the reconnect.
        if (error && error.message === "message nacked") {
          this.#options.logger.error(
            { method: call.method },
            "the broker nacked a message; reconnecting on a fresh channel",
          );
          this.#fail(call, ErrorCode.NACKED, "the broker nacked a message");
          // A channel whose quorum queue lost its leader can keep refusing every publish (seen on
          // RabbitMQ 3.10 after a node was killed): the link is given up at once, so that the next
          // publishes wait for a new connection instead of going out on this closing one.
          this.#lost(link);
        }
      },
    );
  }

  async #write(
    caller: string,
    method: WriteMethod,
    data: unknown,
    relation?: RelationType,
  ): Promise<boolean> {
    if (this.#closed) throw closedError("client", caller);
    const { count, messages } = this.#messages(caller, method, data, relation ?? null);
    if (count === 0) return true;
    let resolve!: (ok: boolean) => void;
    const done = new Promise<boolean>((r) => {
      resolve = r;
    });
    const call: Call = {
      // the global crypto, not an import of node:crypto: that costs the package import time (#31)
      id: crypto.randomUUID(),
      method: caller,
      expected: count,
      answered: 0,
      pending: new Map(),
      timeoutMs: Math.max(this.#options.waitMinMs, count * this.#options.waitPerBatchMs),
      timer: undefined,
      resolve,
    };
    this.#calls.set(call.id, call);
    this.#arm(call);
    const settled = () => !this.#calls.has(call.id);
    // Each message is formed when there is room for it: a call holds at most IN_FLIGHT_ITEMS items' references.
    for (const message of messages) {
      if (!(await this.#inFlight.acquire(message.items, settled))) break;
      call.pending.set(message.id, message);
      await this.#publish(call, message);
    }
    return done;
  }

  /**
   * Validates a write (all or nothing) and counts its messages; the messages themselves (each routing key's
   * items cut into messages of `itemsPerMessage`) are formed as they are iterated. A `Map` write is read
   * from the caller's `Map` as the messages are formed, which must not change until the call resolves.
   */
  #messages(
    caller: string,
    method: WriteMethod,
    data: unknown,
    relation: RelationType | null,
  ): { count: number; messages: Iterable<Message> } {
    const exchange = this.#top.exchange(exchangeOf(method, relation));
    const { itemsPerMessage } = this.#options;
    const message = (routingKey: string, items: number, body: () => Buffer): Message => ({
      id: crypto.randomUUID(),
      exchange,
      routingKey,
      items,
      body,
    });
    if (data instanceof Map && method !== "relation_add") {
      const map = data as Map<Sha1, unknown>;
      const scratch = this.#scratch;
      const counts = countKeys(caller, map, method);
      let count = 0;
      for (const n of counts.values()) count += Math.ceil(n / itemsPerMessage);
      // A second pass over the Map (forEach: no iterator result per item) puts each id in an array of the
      // exact size of its message (the counts are known), by the id's first character (a validated hex
      // digit): no string and no array growth per item; 8 bytes per item, each message's freed once answered.
      const left = new Map(counts);
      const filling = new Map<number, { ids: Sha1[]; n: number }>();
      const full: Sha1[][] = [];
      map.forEach((_, id) => {
        const first = id.charCodeAt(0);
        let next = filling.get(first);
        if (next === undefined) {
          const rest = left.get(first) as number;
          const size = Math.min(itemsPerMessage, rest);
          left.set(first, rest - size);
          next = { ids: new Array<Sha1>(size), n: 0 };
          filling.set(first, next);
        }
        next.ids[next.n++] = id;
        if (next.n === next.ids.length) {
          filling.delete(first);
          full.push(next.ids);
        }
      });
      const cut = function* (): Generator<Message> {
        for (let i = 0; i < full.length; i++) {
          const ids = full[i] as Sha1[];
          full[i] = []; // the message holds its ids from now on, until it is answered
          yield message(`${method}.unknown.${ids[0]?.[0]}`, ids.length, () =>
            encodeMapRequest(method, ids, map, scratch),
          );
        }
      };
      return { count, messages: cut() };
    }
    const messages: Message[] = [];
    for (const [routingKey, items] of splitItems(caller, data, method, relation))
      for (let i = 0; i < items.length; i += itemsPerMessage) {
        const slice = items.slice(i, i + itemsPerMessage);
        messages.push(message(routingKey, slice.length, () => encodeRequest(method, slice)));
      }
    return { count: messages.length, messages };
  }

  /** @inheritDoc */
  contentAdd(cnts: Map<Sha1, Timestamp>): Promise<boolean> {
    return this.#write("contentAdd", "content_add", cnts);
  }

  /** @inheritDoc */
  directoryAdd(dirs: Map<Sha1, DirectoryData>): Promise<boolean> {
    return this.#write("directoryAdd", "directory_add", dirs);
  }

  /** @inheritDoc */
  locationAdd(paths: Iterable<Path>): Promise<boolean> {
    return this.#write("locationAdd", "location_add", paths);
  }

  /** @inheritDoc */
  originAdd(orgs: Map<Sha1, string>): Promise<boolean> {
    return this.#write("originAdd", "origin_add", orgs);
  }

  /** @inheritDoc */
  revisionAdd(revs: Iterable<Sha1> | Map<Sha1, RevisionData>): Promise<boolean> {
    return this.#write("revisionAdd", "revision_add", revs);
  }

  /** @inheritDoc */
  relationAdd(relation: RelationType, data: Map<Sha1, Iterable<RelationData>>): Promise<boolean> {
    return this.#write("relationAdd", "relation_add", data, relation ?? (null as unknown as RelationType));
  }

  #read<T>(method: string, read: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(closedError("client", method));
    return read();
  }

  /** @inheritDoc */
  contentFindFirst(id: Sha1): Promise<ProvenanceResult | null> {
    return this.#read("contentFindFirst", () => this.#storage.contentFindFirst(id));
  }

  /** @inheritDoc */
  contentFindAll(id: Sha1, limit?: number): Promise<ProvenanceResult[]> {
    return this.#read("contentFindAll", () => this.#storage.contentFindAll(id, limit));
  }

  /** @inheritDoc */
  contentGet(ids: Iterable<Sha1>): Promise<Map<Sha1, Timestamp>> {
    return this.#read("contentGet", () => this.#storage.contentGet(ids));
  }

  /** @inheritDoc */
  directoryGet(ids: Iterable<Sha1>): Promise<Map<Sha1, DirectoryData>> {
    return this.#read("directoryGet", () => this.#storage.directoryGet(ids));
  }

  /** @inheritDoc */
  revisionGet(ids: Iterable<Sha1>): Promise<Map<Sha1, RevisionData>> {
    return this.#read("revisionGet", () => this.#storage.revisionGet(ids));
  }

  /** @inheritDoc */
  originGet(ids: Iterable<Sha1>): Promise<Map<Sha1, string>> {
    return this.#read("originGet", () => this.#storage.originGet(ids));
  }

  /** @inheritDoc */
  entityGetAll(entity: EntityType): Promise<Set<Sha1>> {
    return this.#read("entityGetAll", () => this.#storage.entityGetAll(entity));
  }

  /** @inheritDoc */
  locationGetAll(): Promise<Path[]> {
    return this.#read("locationGetAll", () => this.#storage.locationGetAll());
  }

  /** @inheritDoc */
  relationGet(
    relation: RelationType,
    ids: Iterable<Sha1>,
    reverse?: boolean,
  ): Promise<Map<Sha1, RelationData[]>> {
    return this.#read("relationGet", () => this.#storage.relationGet(relation, ids, reverse));
  }

  /** @inheritDoc */
  relationGetAll(relation: RelationType): Promise<Map<Sha1, RelationData[]>> {
    return this.#read("relationGetAll", () => this.#storage.relationGetAll(relation));
  }

  /** Resolves every pending call `false` at once, then closes the connection; idempotent. Never closes `storage`. */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    this.#closing.abort();
    for (const resume of this.#windowOpen.splice(0)) resume();
    for (const call of [...this.#calls.values()])
      this.#fail(call, ErrorCode.CLOSED, "the client was closed before the write completed");
    this.#inFlight.wake();
    const link = this.#link;
    this.#link = undefined;
    await link?.connection.close().catch(() => {});
  }

  /** Same as {@link close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

function drained(channel: Channel): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      channel.off("drain", done);
      channel.off("close", done);
      resolve();
    };
    channel.once("drain", done);
    channel.once("close", done);
  });
}
