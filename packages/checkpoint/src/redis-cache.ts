import type { Cache } from "@x/core";
import { parseOptions, redactUrl, v } from "@x/core/internal";
import type { RedisCommandClient } from "./engines/redis-stream.js";
import { CheckpointError, ErrorCode } from "./errors.js";
import { corruptValue, deserializeValue, serializeValue } from "./stored-value.js";

/** Options of {@link RedisCache}. */
export interface RedisCacheOptions {
  /**
   * A connected node-redis client (`await createClient({ url }).connect()`). Required. The cache sends one
   * short command per call and never closes the client: it may be shared with other code, but not with a
   * `redisStream`, whose `XREAD BLOCK` holds its connection while it waits.
   */
  client: RedisCommandClient;
  /**
   * The namespace of the keys: a cache key `k` is stored in the Redis key `<prefix>:k`. Required, a string
   * with at least one character that is not white space; choose one per group of processes that share
   * checkpoints (the group's name, for example).
   */
  prefix: string;
}

const NON_BLANK = "a string with a character that is not white space";

const schema = v.strictObject({
  client: v.custom<RedisCommandClient>(
    (value) =>
      typeof value === "object" &&
      value !== null &&
      typeof (value as RedisCommandClient).sendCommand === "function" &&
      (value as RedisCommandClient).isOpen !== false,
    { error: "a connected node-redis client (await createClient().connect())" },
  ),
  prefix: v.string({ error: NON_BLANK }).regex(/\S/, { error: NON_BLANK }),
});

/**
 * An asynchronous `@x/core` `Cache` in Redis, shared by every process that reaches the server: checkpoints
 * that survive restarts, and that another process (or another host) can take over. Each value is stored as
 * the base64 text of its `node:v8` serialisation, as `SqliteCache` stores it (so `Date`, `bigint`, `Map`,
 * `Set` and typed arrays round-trip), in the string key `<prefix>:<key>`, without expiry. Each call is one
 * command (`GET`, `SET`, `EXISTS`, `DEL`), so every write is atomic for its key.
 *
 * Works over a node-redis client (`redis` 4 to 6, an optional peer dependency) that you connect and close.
 * A `Checkpoint` reads it through `Checkpoint.open`, which awaits the reads.
 *
 * @example
 * ```ts
 * const cache = new RedisCache({ client: await createClient().connect(), prefix: "pricing" });
 * const cp = await Checkpoint.open("enrich", { dependencies: [prices], cache });
 * ```
 */
export class RedisCache implements Cache {
  /** The namespace given to the constructor: every key is stored as `<prefix>:<key>`. */
  readonly prefix: string;
  readonly #client: RedisCommandClient;
  /** Where the server is, for error messages: `" at <url>"` with the password shown as `***`, or `""`. */
  readonly #at: string;

  /**
   * Checks the options; sends nothing to Redis.
   *
   * @throws `ERR_X_CHECKPOINT_INVALID_OPTION` naming the option: a `client` that is no node-redis client or
   *   is not open, a `prefix` that is not a string or is empty or blank, an unknown option
   */
  constructor(options: RedisCacheOptions) {
    const { client, prefix } = parseOptions(schema, options, ErrorCode.INVALID_OPTION, CheckpointError);
    this.#client = client;
    this.prefix = prefix;
    const url = client.options?.url;
    this.#at = url ? ` at ${redactUrl(url)}` : "";
  }

  /**
   * The value stored under `key`, or `undefined` when it is missing.
   *
   * @throws `ERR_X_CHECKPOINT_CORRUPT` naming the Redis key when its value cannot be deserialised or is no
   *   string (written by something else); `ERR_X_CHECKPOINT_CACHE_IO` when the command fails
   */
  async get(key: string): Promise<unknown> {
    const stored = this.#key(key);
    const reply = await this.#send(["GET", stored]);
    if (reply === null || reply === undefined) return undefined;
    const text = String(reply);
    const bytes = Buffer.from(text, "base64");
    if (bytes.toString("base64") !== text)
      throw corruptValue(stored, new TypeError("the stored value is not base64 text"));
    return deserializeValue(stored, bytes);
  }

  /**
   * Stores `value` under `key`, replacing any previous value.
   *
   * @throws `ERR_X_CHECKPOINT_CACHE_VALUE` for a value that cannot be serialised, and nothing is sent;
   *   `ERR_X_CHECKPOINT_CACHE_IO` when the command fails
   */
  async set(key: string, value: unknown): Promise<void> {
    const stored = this.#key(key);
    const text = serializeValue(stored, value).toString("base64");
    await this.#send(["SET", stored, text]);
  }

  /**
   * Whether `key` holds a value (`undefined` and `null` included).
   *
   * @throws `ERR_X_CHECKPOINT_CACHE_IO` when the command fails
   */
  async has(key: string): Promise<boolean> {
    return Number(await this.#send(["EXISTS", this.#key(key)])) > 0;
  }

  /**
   * Removes `key`; resolves whether it was there. No error when it is missing.
   *
   * @throws `ERR_X_CHECKPOINT_CACHE_IO` when the command fails
   */
  async delete(key: string): Promise<boolean> {
    return Number(await this.#send(["DEL", this.#key(key)])) > 0;
  }

  #key(key: string): string {
    return `${this.prefix}:${key}`;
  }

  /** Sends `command`, whose second word is the Redis key, and turns a failure into a `CheckpointError`. */
  async #send(command: readonly [string, string, ...string[]]): Promise<unknown> {
    const [name, stored] = command;
    try {
      return await this.#client.sendCommand(command);
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      // Only GET meets a key of another type: a value this package did not write.
      if (reason.startsWith("WRONGTYPE")) throw corruptValue(stored, cause);
      throw new CheckpointError(
        ErrorCode.CACHE_IO,
        `Redis ${name} of key ${JSON.stringify(stored)}${this.#at} failed: ${reason}`,
        { cause },
      );
    }
  }
}
