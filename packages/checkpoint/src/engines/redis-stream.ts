import { durationMs, redactUrl, v } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "../errors.js";
import type { BrokerEngine, BrokerSession, BrokerStream, SessionStart } from "./broker-stream.js";
import { RedisGroup } from "./redis-group.js";
import { entriesOf, ID, parseReply, predecessor } from "./redis-ids.js";
import {
  checkPositionOf,
  count,
  parseStreamOptions,
  type StreamOptions,
  streamOf,
  streamOptionFields,
  timePosition,
} from "./stream-options.js";

/**
 * The part of a node-redis client (`redis` 4 to 6, `createClient()`) that the adapter uses. Any client with a
 * `sendCommand(args)` that resolves to the raw reply fits; the other members, which node-redis has, let the
 * stream connect the client and see why a connection fails.
 */
export interface RedisCommandClient {
  sendCommand(args: readonly string[]): Promise<unknown>;
  /** Whether the client is connecting or connected (node-redis). */
  readonly isOpen?: boolean;
  /** Whether the client is connected and ready for commands (node-redis). */
  readonly isReady?: boolean;
  /** Connects the client (node-redis); the stream calls it when the client is not open. */
  connect?(): Promise<unknown>;
  /** Closes the client at once (node-redis 5 and 6): what the stream does to a client it connected. */
  destroy?(): void;
  /** The client's events: `ready`, and `error` for each failed connection attempt. */
  on?(event: "ready" | "error", listener: (error?: unknown) => void): unknown;
  off?(event: "ready" | "error", listener: (error?: unknown) => void): unknown;
  /** The client's options: their `url` names the server in messages, with the password shown as `***`. */
  readonly options?: { url?: string } | undefined;
}

/** One entry of a Redis stream, as {@link redisStream} hands it out. */
export interface RedisStreamRecord {
  /** The entry id, `"<ms>-<seq>"`: its position, what the checkpoint state holds. */
  id: string;
  /** The time in the id (when Redis added the entry, unless the producer chose the id). */
  time: Date;
  /** The entry's field-value pairs. */
  fields: Record<string, string>;
}

/** Where a {@link redisStream} starts when no position was sought. */
export type RedisStreamStart = "first" | "next" | { id: string } | { time: Date };

/** Options of {@link redisStream}. */
export interface RedisStreamOptions extends StreamOptions {
  /**
   * A node-redis client of the stream's own: `XREAD BLOCK` holds its connection while it waits, so give it
   * `client.duplicate()` rather than a client that other code uses. Required. Pass it connected, or not yet
   * connected (`createClient({ url })`): the stream then connects it at the first read, fails fast when the
   * server refuses the login or does not answer, and closes it with the stream.
   */
  client: RedisCommandClient;
  /** The stream's key. Required. */
  key: string;
  /**
   * Where to start: `"first"` (the oldest entry), `"next"` (entries added after the first read), `{ id }`
   * (that entry, inclusive) or `{ time }` (the first entry at or after that time). Default `"first"`.
   */
  from?: RedisStreamStart;
  /** Entries per `XREAD` (`COUNT`). Default 500. */
  batchSize?: number;
  /** How long one `XREAD` waits for new entries (`BLOCK`), in ms; a pause waits for a read in flight. Default 1 000. */
  blockMs?: number;
  /**
   * Read the stream as one member of a consumer group (`XREADGROUP`): the members share the entries, and a
   * pause, a seek and a resume act on the whole group. See the README's *Consumer groups*. Default none: this
   * process reads every entry.
   */
  group?: RedisGroupOptions;
}

/** The `group` option of {@link redisStream}. */
export interface RedisGroupOptions {
  /** The group's name: every member names the same one. Required. */
  name: string;
  /** This member's name, unique in the group and kept across its restarts (`hostname-1`, say). Required. */
  consumer: string;
  /**
   * Entries another member received and has not acknowledged for this long (it died) are taken over by this
   * one, in ms. Longer than a member may take to handle one batch. Default 30 000.
   */
  claimIdleMs?: number;
  /**
   * A paused member renews the group's pause every third of this time; when every member that keeps it has
   * died, the pause expires after it, and the others read again (and pause again if they find the dependency
   * still down), in ms. Default 10 000.
   */
  pauseLeaseMs?: number;
}

const schema = v.strictObject({
  client: v.custom<RedisCommandClient>(
    (value) =>
      typeof value === "object" &&
      value !== null &&
      typeof (value as RedisCommandClient).sendCommand === "function",
    { error: "a node-redis client (createClient()), connected" },
  ),
  key: v.string({ error: "a non-empty string" }).min(1, { error: "a non-empty string" }),
  from: v
    .union([v.literal(["first", "next"]), v.strictObject({ id: v.string().regex(ID) }), timePosition], {
      error: '"first", "next", { id: "<ms>-<seq>" } or { time: Date }',
    })
    .default("first"),
  batchSize: count(100_000).default(500),
  blockMs: durationMs({ min: 1 }).default(1_000),
  group: v
    .strictObject({
      name: v.string({ error: "a non-empty string" }).min(1, { error: "a non-empty string" }),
      consumer: v.string({ error: "a non-empty string" }).min(1, { error: "a non-empty string" }),
      claimIdleMs: durationMs({ min: 1 }).default(30_000),
      pauseLeaseMs: durationMs({ min: 30 }).default(10_000),
    })
    .optional(),
  ...streamOptionFields,
});

/**
 * A Redis stream (`XADD`) as the pausable, seekable dependent of a `Checkpoint`, read with `XREAD` from the
 * position after the last entry handed out; entry ids are the positions. While paused no `XREAD` is sent, so
 * Redis delivers nothing, whatever happens to the connection; node-redis reconnects by itself, and reads
 * that fail meanwhile are retried.
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * import { redisStream } from "@x/checkpoint/redis";
 * const orders = redisStream({ client: await createClient().connect(), key: "orders" });
 * const cp = new Checkpoint("pricing", {
 *   dependent: orders,
 *   dependencies: [new Dependency("prices")],
 *   recoveryCallback: (_cp, dep) => orders.seek((dep.checkpointState as { id: string }).id),
 * });
 * for await (const order of orders) await cp.checkPulse(order.time, { id: order.id });
 * ```
 *
 * @throws `ERR_X_CHECKPOINT_INVALID_OPTION` for a bad option, naming it
 */
export function redisStream(options: RedisStreamOptions): BrokerStream<RedisStreamRecord, string> {
  const parsed = parseStreamOptions(schema, options);
  return streamOf(new RedisEngine(parsed), parsed);
}

class RedisEngine implements BrokerEngine<RedisStreamRecord, string> {
  readonly #options: v.Output<typeof schema>;
  /** The id `"next"` resolved to at the first read, so that a reopened session skips nothing. */
  #next: string | undefined;
  /** Whether the stream connected the client, and so closes it. */
  #owned = false;
  /** The stream's listener of the client's `error` events, once it waited for the client. */
  #onError: ((error?: unknown) => void) | undefined;
  /** Rejects the wait for the client in progress. */
  #failed: ((error?: unknown) => void) | undefined;
  readonly describe: string;
  readonly group: RedisGroup | undefined;
  /** Whether the group was created (or found) at the first open. */
  #grouped = false;

  constructor(options: v.Output<typeof schema>) {
    this.#options = options;
    const url = options.client.options?.url;
    const member = options.group
      ? ` (group ${JSON.stringify(options.group.name)}, member ${JSON.stringify(options.group.consumer)})`
      : "";
    this.describe = `Redis stream ${JSON.stringify(options.key)}${url ? ` at ${redactUrl(url)}` : ""}${member}`;
    this.group = options.group && new RedisGroup(options.client, options.key, options.group, options.logger);
  }

  async close(): Promise<void> {
    const client = this.#options.client;
    if (this.#owned && client.isOpen !== false) client.destroy?.();
    this.#owned = false;
    if (this.#onError) client.off?.("error", this.#onError);
    this.#onError = undefined;
  }

  positionOf(record: RedisStreamRecord): string {
    return record.id;
  }

  checkPosition(position: unknown): asserts position is string {
    checkPositionOf(
      typeof position === "string" && ID.test(position),
      position,
      'a Redis stream id "<ms>-<seq>"',
    );
  }

  async open(start: SessionStart<string>): Promise<BrokerSession<RedisStreamRecord>> {
    await this.#ready();
    await this.#checkType();
    const { group } = this;
    if (group) {
      // a member reads from the group's cursor, on the server: `from` only places a group that is new
      if (!this.#grouped) await group.create(await this.#exclusiveId(undefined));
      this.#grouped = true;
      const { batchSize, blockMs, logger } = this.#options;
      return group.session(batchSize, blockMs, logger);
    }
    let after = await this.#exclusiveId(start);
    const { client, key, batchSize, blockMs } = this.#options;
    let delivered = 0;
    /** Sends one `XREAD` from after the last entry read; `block`: waits up to `blockMs` for new entries. */
    const xread = async (block: boolean): Promise<readonly RedisStreamRecord[]> => {
      const wait = block ? ["BLOCK", String(Math.round(blockMs))] : [];
      const reply = await wrongType(
        client.sendCommand(["XREAD", "COUNT", String(batchSize), ...wait, "STREAMS", key, after]),
        key,
      );
      const records = parseReply(reply);
      delivered += records.length;
      const last = records.at(-1);
      if (last) after = last.id;
      return records;
    };
    // After a full batch, the next `XREAD` (without BLOCK) goes out at once, while the stream hands out this
    // batch: Redis answers it meanwhile. A pause or a seek closes the session, which drops what it read.
    let ahead: Promise<readonly RedisStreamRecord[]> | undefined;
    let reading: Promise<readonly RedisStreamRecord[]> | undefined;
    const readAhead = (records: readonly RedisStreamRecord[]) => {
      if (records.length === batchSize) {
        ahead = xread(false);
        ahead.catch(() => {}); // the read that takes it sees its failure
      }
      return records;
    };
    return {
      get delivered() {
        return delivered;
      },
      read() {
        const next = ahead ?? xread(true);
        ahead = undefined;
        reading = next.then(readAhead);
        return reading;
      },
      close: async () => {
        await reading?.catch(() => {});
        await ahead?.catch(() => {});
      },
    };
  }

  /**
   * Resolves once the client is ready for commands, connecting it if it is not open; rejects with the error
   * of the next failed connection attempt, for the stream to classify and retry.
   */
  async #ready(): Promise<void> {
    const client = this.#options.client;
    if (client.isReady !== false || !client.on || !client.off) return;
    // Listens until the stream closes: an `error` event without a listener would end node-redis's reconnects.
    if (!this.#onError) {
      this.#onError = (error) => this.#failed?.(error);
      client.on("error", this.#onError);
    }
    const on = client.on.bind(client);
    const off = client.off.bind(client);
    await new Promise<void>((resolve, reject) => {
      const ready = () => {
        off("ready", ready);
        this.#failed = undefined;
        resolve();
      };
      this.#failed = (error) => {
        this.#failed = undefined;
        off("ready", ready);
        reject(error);
      };
      on("ready", ready);
      if (client.isOpen === false && client.connect) {
        this.#owned = true;
        client.connect().catch(() => {}); // its failures come as `error` events
      }
    });
  }

  /** Rejects with `ERR_X_CHECKPOINT_NOT_A_STREAM` when the key does not exist or holds no stream. */
  async #checkType(): Promise<void> {
    const { client, key } = this.#options;
    const type = String(await client.sendCommand(["TYPE", key]));
    if (type === "stream") return;
    throw new CheckpointError(
      ErrorCode.NOT_A_STREAM,
      type === "none"
        ? `the Redis key ${JSON.stringify(key)} does not exist: create the stream first (XADD, or XGROUP CREATE … MKSTREAM)`
        : `the Redis key ${JSON.stringify(key)} holds no stream (its type is ${type})`,
    );
  }

  /** The id for `XREAD`, which reads the entries after it. */
  async #exclusiveId(start: SessionStart<string>): Promise<string> {
    if (start && "after" in start) return start.after;
    if (start) return predecessor(start.at);
    const from = this.#options.from;
    if (from === "first") return "0-0";
    if (from === "next") {
      this.#next ??= await this.#lastId();
      return this.#next;
    }
    return "id" in from ? predecessor(from.id) : predecessor(`${from.time.getTime()}-0`);
  }

  async #lastId(): Promise<string> {
    const reply = await this.#options.client.sendCommand([
      "XREVRANGE",
      this.#options.key,
      "+",
      "-",
      "COUNT",
      "1",
    ]);
    const [entry] = entriesOf(reply);
    return entry ? String(entry[0]) : "0-0";
  }
}

/** `reading`, with Redis's `WRONGTYPE` error (the key holds no stream) turned into `ERR_X_CHECKPOINT_NOT_A_STREAM`. */
async function wrongType<T>(reading: Promise<T>, key: string): Promise<T> {
  try {
    return await reading;
  } catch (cause) {
    if (!String((cause as Error)?.message).startsWith("WRONGTYPE")) throw cause;
    throw new CheckpointError(
      ErrorCode.NOT_A_STREAM,
      `the Redis key ${JSON.stringify(key)} holds no stream`,
      { cause },
    );
  }
}
