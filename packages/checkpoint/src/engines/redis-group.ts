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
  /** How long the group's pause outlives the last member that keeps it (it renews it while paused), in ms. */
  pauseLeaseMs: number;
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

/**
 * Sets the pause flag KEYS[1] to ARGV[1] for ARGV[2] ms, or renews it when it is set. A new flag starts a
 * downtime, unless the last one lapsed unended: the hash KEYS[2] names it and keeps the earliest record a
 * pausing member was at (ARGV[3], and its predecessor ARGV[4]; none when empty).
 */
const PAUSE = `${OLDER}
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if redis.call('EXISTS', KEYS[2]) == 0 or redis.call('HEXISTS', KEYS[2], 'ended') == 1 then
    redis.call('DEL', KEYS[2])
    redis.call('HSET', KEYS[2], 'name', ARGV[1])
  end
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if ARGV[3] ~= '' then
  local from = redis.call('HGET', KEYS[2], 'from')
  if not from or older(ARGV[3], from) then redis.call('HSET', KEYS[2], 'from', ARGV[3], 'before', ARGV[4]) end
end
return 1
`;

/** Lifts the pause KEYS[1] and ends its downtime KEYS[2]. */
const RESUME = `
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'ended', 'resumed') end
return 1
`;

/** Moves group ARGV[1] of stream KEYS[1] back to `id` (predecessor `before`) unless done in this downtime. */
const REPLAY = `
local function replay(name, id, before)
  redis.call('HSET', KEYS[2], 'downtime', name, 'id', id)
  redis.call('XGROUP', 'SETID', KEYS[1], ARGV[1], before)
end
`;

/**
 * Whether the group is paused (KEYS[3]). A pause that lapsed (every member that kept it died) with its
 * downtime (KEYS[4]) unended ends it here, replaying the group once from the earliest record a pausing member
 * was at: no member recovered to seek.
 */
const CHECK = `${REPLAY}
if redis.call('EXISTS', KEYS[3]) == 1 then return 1 end
local downtime = redis.call('HMGET', KEYS[4], 'name', 'from', 'before', 'ended')
if downtime[1] and not downtime[4] then
  redis.call('HSET', KEYS[4], 'ended', 'lapsed')
  if downtime[2] and redis.call('HGET', KEYS[2], 'downtime') ~= downtime[1] then
    replay(downtime[1], downtime[2], downtime[3])
  end
end
return 0
`;

/**
 * Moves the group ARGV[1] of the stream KEYS[1] back to ARGV[2] (its predecessor is ARGV[3]), or to where the
 * earliest pausing member of the downtime (KEYS[3]) was, when that is earlier (a member that died before it
 * recovered does not seek). Once per downtime: within one, only further back, since every recovering member
 * seeks and the group must replay once, from the earliest point; in a new one, never behind the last replay
 * (KEYS[2]), since a member that restarts with an old downtime in its cache seeks to where it was then.
 */
const SEEK_ONCE = `${OLDER}${REPLAY}
local downtime = redis.call('HMGET', KEYS[3], 'name', 'from', 'before')
local name = downtime[1] or ''
local target, before = ARGV[2], ARGV[3]
if downtime[2] and older(downtime[2], target) then target, before = downtime[2], downtime[3] end
local last = redis.call('HMGET', KEYS[2], 'downtime', 'id')
if last[2] then
  if last[1] == name and older(last[2], target) then return 0 end
  if last[1] ~= name and older(target, last[2]) then return 0 end
end
replay(name, target, before)
return 1
`;

/**
 * A consumer group on one Redis stream, as one member sees it: the group's pause, its replay point, and the
 * member's read sessions. The pause is the key `<stream key>:<group>:paused` (the member that set it, and
 * when), which every member reads before each `XREADGROUP`; it expires `pauseLeaseMs` after the last renewal
 * by a paused member, so that a pause does not outlive every member that keeps it. The hash
 * `<stream key>:<group>:downtime` names the downtime and the earliest record a pausing member was at;
 * `<stream key>:<group>:replay` is where the group last replayed from, in which downtime.
 */
export class RedisGroup implements GroupControl<string> {
  readonly #client: RedisCommandClient;
  readonly #key: string;
  readonly #settings: RedisGroupSettings;
  readonly #logger: Logger;
  readonly #pausedKey: string;
  readonly #downtimeKey: string;
  readonly #replayKey: string;
  /** Renews the pause while this member is paused. */
  #renewal: NodeJS.Timeout | undefined;

  constructor(client: RedisCommandClient, key: string, settings: RedisGroupSettings, logger: Logger) {
    this.#client = client;
    this.#key = key;
    this.#settings = settings;
    this.#logger = logger;
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

  /** Whether a member paused the group; a pause that lapsed ends its downtime (see {@link CHECK}). */
  async isPaused(): Promise<boolean> {
    const keys = [this.#key, this.#replayKey, this.#pausedKey, this.#downtimeKey];
    return Number(await this.#client.sendCommand(["EVAL", CHECK, "4", ...keys, this.#settings.name])) === 1;
  }

  /**
   * Pauses every member: sets the pause, naming this member, unless another member set it first, and renews
   * it until {@link RedisGroup.resume} or {@link RedisGroup.close}.
   *
   * @param at - the record this member was at (the one whose pulse found the dependency down)
   */
  async pause(at?: string): Promise<void> {
    const flag = `${this.#settings.consumer} ${new Date().toISOString()}`;
    const lease = String(this.#settings.pauseLeaseMs);
    const from = at === undefined ? ["", ""] : [at, predecessor(at)];
    const script = ["EVAL", PAUSE, "2", this.#pausedKey, this.#downtimeKey, flag, lease, ...from];
    await this.#client.sendCommand(script);
    clearInterval(this.#renewal);
    this.#renewal = setInterval(() => {
      this.#client
        .sendCommand(["PEXPIRE", this.#pausedKey, lease])
        .catch((error: unknown) => this.#logger.debug({ error }, "renewing the group's pause failed"));
    }, this.#settings.pauseLeaseMs / 3);
    this.#renewal.unref();
  }

  /** Lets every member read again, and ends the downtime. */
  async resume(): Promise<void> {
    this.close();
    await this.#client.sendCommand(["EVAL", RESUME, "2", this.#pausedKey, this.#downtimeKey]);
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
      this.#settings.name,
      id,
      predecessor(id),
    ]);
  }

  /** Stops renewing the pause: it expires unless another paused member renews it. */
  close(): void {
    clearInterval(this.#renewal);
    this.#renewal = undefined;
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
