import type { Logger } from "@x/core";
import type { BrokerSession, GroupControl } from "./broker-stream.js";
import { entriesOf, predecessor, recordOf, replyEntries } from "./redis-ids.js";
import type { RedisCommandClient, RedisStreamRecord } from "./redis-stream.js";

/** How a consumer group reads one Redis stream (`group` of `redisStream`). */
export interface RedisGroupSettings {
  /** The group's name (`XGROUP CREATE`); every member names the same group. */
  name: string;
  /** This member's name in the group, unique per member (`hostname-pid`, say). */
  consumer: string;
  /** Entries another member received and left unacknowledged this long are taken over, in ms. */
  claimIdleMs: number;
}

/** `a <= b` for two stream ids, in Lua. */
const OLDER = `
local function older(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  if #am ~= #bm then return #am < #bm end
  if am ~= bm then return am < bm end
  if #as ~= #bs then return #as < #bs end
  return as <= bs
end
`;

/** Sets the pause flag (KEYS[1]) to ARGV[1] unless it is set; a new flag starts a downtime (KEYS[2]). */
const PAUSE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then redis.call('SET', KEYS[2], ARGV[1]) end
return 1
`;

/**
 * Moves the group (ARGV[2]) of the stream KEYS[1] back to ARGV[1] (its predecessor is ARGV[3]), once per
 * downtime (KEYS[3] names the current one): within a downtime only further back, since every recovering
 * member seeks and the group must replay once, from the earliest point asked; in a new downtime never behind
 * the last replay (KEYS[2] holds it), since a member that restarts with an old downtime in its cache seeks to
 * where it was then.
 */
const SEEK_ONCE = `${OLDER}
local downtime = redis.call('GET', KEYS[3]) or ''
local last = redis.call('HMGET', KEYS[2], 'downtime', 'id')
if last[2] then
  if last[1] == downtime and older(last[2], ARGV[1]) then return 0 end
  if last[1] ~= downtime and older(ARGV[1], last[2]) then return 0 end
end
redis.call('HSET', KEYS[2], 'downtime', downtime, 'id', ARGV[1])
redis.call('XGROUP', 'SETID', KEYS[1], ARGV[2], ARGV[3])
return 1
`;

/**
 * A consumer group on one Redis stream, as one member sees it: the group's pause flag, its replay point, and
 * the member's read sessions. The flag is the key `<stream key>:<group>:paused` (the member that set it, and
 * when), which every member reads before each `XREADGROUP`; `<stream key>:<group>:downtime` names the last
 * downtime, and `<stream key>:<group>:replay` where the group last replayed from, in which downtime.
 */
export class RedisGroup implements GroupControl<string> {
  readonly #client: RedisCommandClient;
  readonly #key: string;
  readonly #settings: RedisGroupSettings;
  readonly #pausedKey: string;
  readonly #downtimeKey: string;
  readonly #replayKey: string;

  constructor(client: RedisCommandClient, key: string, settings: RedisGroupSettings) {
    this.#client = client;
    this.#key = key;
    this.#settings = settings;
    this.#pausedKey = `${key}:${settings.name}:paused`;
    this.#downtimeKey = `${key}:${settings.name}:downtime`;
    this.#replayKey = `${key}:${settings.name}:replay`;
  }

  /** Creates the group, its cursor at `after` (`$`: the entries added from now on), unless it exists. */
  async create(after: string): Promise<void> {
    try {
      await this.#client.sendCommand(["XGROUP", "CREATE", this.#key, this.#settings.name, after]);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith("BUSYGROUP")) throw error;
    }
  }

  /** Whether a member paused the group. */
  async isPaused(): Promise<boolean> {
    return (await this.#client.sendCommand(["GET", this.#pausedKey])) !== null;
  }

  /** Pauses every member: sets the flag, naming this member, unless another member set it first. */
  async pause(): Promise<void> {
    const flag = `${this.#settings.consumer} ${new Date().toISOString()}`;
    await this.#client.sendCommand(["EVAL", PAUSE, "2", this.#pausedKey, this.#downtimeKey, flag]);
  }

  /** Lets every member read again. */
  async resume(): Promise<void> {
    await this.#client.sendCommand(["DEL", this.#pausedKey]);
  }

  /** Moves the group back so that `id` is delivered again, once per downtime (see {@link SEEK_ONCE}). */
  async seek(id: string): Promise<void> {
    await this.#client.sendCommand([
      "EVAL",
      SEEK_ONCE,
      "3",
      this.#key,
      this.#replayKey,
      this.#downtimeKey,
      id,
      this.#settings.name,
      predecessor(id),
    ]);
  }

  /**
   * A read session of this member: first the entries the group delivered to it before and it has not
   * acknowledged (a restart, a pause), then entries another member left idle for `claimIdleMs` (it died),
   * then new ones. Each batch is acknowledged when the next one is read, or at close as far as it was handed out.
   */
  session(batchSize: number, blockMs: number, logger: Logger): BrokerSession<RedisStreamRecord> {
    return new GroupSession(this.#client, this.#key, this.#settings, batchSize, blockMs, logger);
  }
}

class GroupSession implements BrokerSession<RedisStreamRecord> {
  readonly #client: RedisCommandClient;
  readonly #key: string;
  readonly #group: RedisGroupSettings;
  readonly #count: string;
  readonly #block: string;
  readonly #logger: Logger;
  /** Where the session reads: its own pending entries from this id (`0-0` at first), or new ones (`>`). */
  #cursor = "0-0";
  /** When this member last looked for entries left idle by others. */
  #claimedAt = 0;
  /** The ids of the last batch, acknowledged when the next one is read. */
  #unacknowledged: string[] = [];
  #reading: Promise<readonly RedisStreamRecord[]> | undefined;
  delivered = 0;

  constructor(
    client: RedisCommandClient,
    key: string,
    group: RedisGroupSettings,
    batchSize: number,
    blockMs: number,
    logger: Logger,
  ) {
    this.#client = client;
    this.#key = key;
    this.#group = group;
    this.#count = String(batchSize);
    this.#block = String(Math.round(blockMs));
    this.#logger = logger;
  }

  read(): Promise<readonly RedisStreamRecord[]> {
    this.#reading = this.#read();
    return this.#reading;
  }

  async close(handedOut?: number): Promise<void> {
    await this.#reading?.catch(() => {});
    const ids = handedOut === undefined ? this.#unacknowledged : this.#unacknowledged.slice(0, handedOut);
    this.#unacknowledged = [];
    await this.#acknowledge(ids).catch((error: unknown) =>
      this.#logger.warn({ error, stream: this.#key }, "acknowledging handed-out entries failed"),
    );
  }

  async #read(): Promise<readonly RedisStreamRecord[]> {
    // sent together with the read that follows (node-redis pipelines a connection's commands)
    const acknowledged = this.#acknowledge(this.#unacknowledged);
    this.#unacknowledged = [];
    const [records] = await Promise.all([this.#next(), acknowledged]);
    this.delivered += records.length;
    this.#unacknowledged = records.map((record) => record.id);
    return records;
  }

  async #next(): Promise<RedisStreamRecord[]> {
    return (await this.#own()) ?? (await this.#claimed()) ?? (await this.#new());
  }

  /** The next of this member's own pending entries, or `undefined` once there are none left. */
  async #own(): Promise<RedisStreamRecord[] | undefined> {
    if (this.#cursor === ">") return undefined;
    const records = await this.#readGroup(this.#cursor, false);
    const last = records.at(-1);
    if (!last) {
      this.#cursor = ">";
      return undefined;
    }
    this.#cursor = last.id;
    return records;
  }

  /** Entries another member left unacknowledged for `claimIdleMs`, looked for at most twice per that time. */
  async #claimed(): Promise<RedisStreamRecord[] | undefined> {
    const now = Date.now();
    if (now - this.#claimedAt < this.#group.claimIdleMs / 2) return undefined;
    this.#claimedAt = now;
    const reply = await this.#client.sendCommand([
      "XAUTOCLAIM",
      this.#key,
      this.#group.name,
      this.#group.consumer,
      String(this.#group.claimIdleMs),
      "0-0",
      "COUNT",
      this.#count,
    ]);
    const records = present(entriesOf(Array.isArray(reply) ? reply[1] : undefined));
    // a full batch: there may be more to take over at the next read
    if (records.length >= Number(this.#count)) this.#claimedAt = 0;
    if (records.length === 0) return undefined;
    this.#logger.warn(
      { stream: this.#key, group: this.#group.name, entries: records.length },
      "took over entries another member left unacknowledged",
    );
    return records;
  }

  async #new(): Promise<RedisStreamRecord[]> {
    return this.#readGroup(">", true);
  }

  async #readGroup(id: string, block: boolean): Promise<RedisStreamRecord[]> {
    const reply = await this.#client.sendCommand([
      "XREADGROUP",
      "GROUP",
      this.#group.name,
      this.#group.consumer,
      "COUNT",
      this.#count,
      ...(block ? ["BLOCK", this.#block] : []),
      "STREAMS",
      this.#key,
      id,
    ]);
    const entries = replyEntries(reply);
    const records = present(entries);
    if (records.length < entries.length) {
      // entries deleted after the group delivered them: nothing to hand out, nothing left to take over
      const gone = entries.filter(([, fields]) => !Array.isArray(fields)).map(([entryId]) => String(entryId));
      await this.#acknowledge(gone);
      if (records.length === 0 && !block) return this.#readGroup(String(entries.at(-1)?.[0]), false);
    }
    return records;
  }

  async #acknowledge(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#client.sendCommand(["XACK", this.#key, this.#group.name, ...ids]);
  }
}

/** The records of the entries that still exist (a deleted one comes back without fields). */
function present(entries: readonly [unknown, unknown][]): RedisStreamRecord[] {
  return entries.filter(([, fields]) => Array.isArray(fields)).map(recordOf);
}
