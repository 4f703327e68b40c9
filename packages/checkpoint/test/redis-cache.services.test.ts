// RedisCache against the machine's Redis: what it stores and where, two processes (or two connections)
// sharing one key space, and a checkpoint restored by a new process from what another one persisted.
import { deserialize, serialize } from "node:v8";
import { requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { Checkpoint, Dependency } from "../src/index.js";
import { RedisCache } from "../src/redis.js";
import { startScript } from "./child-script.js";
import { at, expectCode, recordingDependent } from "./helpers.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A connected client, destroyed when the current test finishes. */
async function connect() {
  const client = createClient({ url: REDIS_URL });
  client.on("error", () => {}); // node-redis needs a listener; these tests never lose the server
  await client.connect();
  onTestFinished(() => {
    if (client.isOpen) client.destroy();
  });
  return client;
}

/** The client that reads what the caches wrote, and removes it. */
let admin: Awaited<ReturnType<typeof connect>>;

/** The Redis keys under `prefix`, sorted. */
async function keysUnder(prefix: string): Promise<string[]> {
  return (await admin.keys(`${prefix}:*`)).sort();
}

/** A prefix of this test's own; its keys are deleted when the test finishes. */
function namespace(): string {
  const prefix = uniqueName("cache");
  onTestFinished(async () => {
    const keys = await keysUnder(prefix);
    if (keys.length > 0) await admin.del(keys);
  });
  return prefix;
}

beforeAll(async () => {
  await requireService("Redis", REDIS_URL);
  admin = createClient({ url: REDIS_URL });
  admin.on("error", () => {});
  await admin.connect();
});
afterAll(() => admin?.destroy());

const values: Record<string, unknown> = {
  date: at(0),
  bigint: -(2n ** 80n),
  map: new Map<unknown, unknown>([[1, new Set(["a"])]]),
  set: new Set([1, "two", at(3)]),
  nested: { list: [1, "two", null, undefined, { deep: true }], offsets: { p0: 112n } },
  float64: new Float64Array([1.5, -0, Number.NaN]),
  bytes: new Uint8Array([0, 255, 10, 13]),
  undefined: undefined,
  null: null,
  number: 42,
  string: "text with \u0000 and \u00e9",
  boolean: false,
};

describe("RedisCache", () => {
  it("round-trips Date, bigint, Map, Set, typed arrays, nested objects, undefined, null and primitives", async () => {
    const cache = new RedisCache({ client: await connect(), prefix: namespace() });
    for (const [key, value] of Object.entries(values)) {
      await cache.set(key, value);
      expect(await cache.get(key), key).toEqual(value);
      expect(await cache.has(key), key).toBe(true);
    }
    const nested = await cache.get("nested");
    expect(nested).not.toBe(values.nested);
    expect(await cache.get("missing")).toBeUndefined();
    expect(await cache.has("missing")).toBe(false);
  });

  it("replaces a value, deletes a key, and deleting a missing key resolves false", async () => {
    const cache = new RedisCache({ client: await connect(), prefix: namespace() });
    await cache.set("k", 1);
    await cache.set("k", 2);
    expect(await cache.get("k")).toBe(2);
    expect(await cache.delete("k")).toBe(true);
    expect(await cache.delete("k")).toBe(false);
    expect(await cache.has("k")).toBe(false);
  });

  it("stores the base64 text of the node:v8 serialisation in the key <prefix>:<key>, without expiry", async () => {
    const prefix = namespace();
    const cache = new RedisCache({ client: await connect(), prefix });
    await cache.set("__orders__state", values.nested);
    expect(await keysUnder(prefix)).toEqual([`${prefix}:__orders__state`]);
    const raw = await admin.get(`${prefix}:__orders__state`);
    expect(deserialize(Buffer.from(String(raw), "base64"))).toEqual(values.nested);
    expect(await admin.ttl(`${prefix}:__orders__state`)).toBe(-1);
  });

  it("two caches on two connections share one key space; another prefix shares nothing", async () => {
    const prefix = namespace();
    const first = new RedisCache({ client: await connect(), prefix });
    const second = new RedisCache({ client: await connect(), prefix });
    const other = new RedisCache({ client: await connect(), prefix: namespace() });
    await first.set("offsets", { p0: 10n });
    expect(await second.get("offsets")).toEqual({ p0: 10n });
    await second.set("offsets", { p0: 11n });
    expect(await first.get("offsets")).toEqual({ p0: 11n });
    expect(await other.has("offsets")).toBe(false);
    await other.set("offsets", "elsewhere");
    expect(await first.get("offsets")).toEqual({ p0: 11n });
    expect(await second.delete("offsets")).toBe(true);
    expect(await first.has("offsets")).toBe(false);
    expect(await other.get("offsets")).toBe("elsewhere");
  });

  it("a value that cannot be serialised rejects with ERR_X_CHECKPOINT_CACHE_VALUE and stores nothing", async () => {
    const prefix = namespace();
    const cache = new RedisCache({ client: await connect(), prefix });
    await cache.set("k", "kept");
    for (const value of [() => {}, Symbol("s"), { nested: { fn: () => {} } }]) {
      const error = await expectCode(() => cache.set("k", value), "ERR_X_CHECKPOINT_CACHE_VALUE");
      expect(error.message).toContain(`"${prefix}:k"`);
      await expectCode(() => cache.set("new", value), "ERR_X_CHECKPOINT_CACHE_VALUE");
    }
    expect(await cache.get("k")).toBe("kept");
    expect(await keysUnder(prefix)).toEqual([`${prefix}:k`]);
  });

  it("a value written by something else is ERR_X_CHECKPOINT_CORRUPT naming the Redis key", async () => {
    const prefix = namespace();
    const cache = new RedisCache({ client: await connect(), prefix });
    await admin.set(`${prefix}:text`, "2025-01-01T10:00:00");
    await admin.set(`${prefix}:bytes`, Buffer.from([0xde, 0xad, 0xbe, 0xef]).toString("base64"));
    // Edited by hand: lenient base64 decoding would still read { offset: 1 } from it.
    await admin.set(`${prefix}:edited`, `${serialize({ offset: 1 }).toString("base64")} (edited)`);
    await admin.hSet(`${prefix}:hash`, "field", "value");
    for (const key of ["text", "bytes", "edited", "hash"]) {
      const error = await expectCode(() => cache.get(key), "ERR_X_CHECKPOINT_CORRUPT");
      expect(error.message).toContain(`"${prefix}:${key}"`);
      expect(error.cause).toBeDefined();
    }
  });

  it("a command on a closed client rejects with ERR_X_CHECKPOINT_CACHE_IO naming the command and the key", async () => {
    const client = await connect();
    const prefix = namespace();
    const cache = new RedisCache({ client, prefix });
    client.destroy();
    for (const [command, use] of [
      ["GET", () => cache.get("k")],
      ["SET", () => cache.set("k", 1)],
      ["EXISTS", () => cache.has("k")],
      ["DEL", () => cache.delete("k")],
    ] as const) {
      const error = await expectCode(use, "ERR_X_CHECKPOINT_CACHE_IO");
      expect(error.message).toContain(`Redis ${command} of key "${prefix}:k" at redis://`);
      expect(error.cause).toBeInstanceOf(Error);
    }
  });

  it("bad options throw ERR_X_CHECKPOINT_INVALID_OPTION naming the option", async () => {
    const client = await connect();
    const notConnected = createClient({ url: REDIS_URL });
    const refusals: [unknown, string][] = [
      [undefined, "invalid option client: undefined"],
      [{ prefix: "p" }, "invalid option client: undefined"],
      [{ client: {}, prefix: "p" }, "invalid option client"],
      [{ client: notConnected, prefix: "p" }, "(expected a connected node-redis client"],
      [{ client }, "invalid option prefix: undefined"],
      [{ client, prefix: "" }, 'invalid option prefix: ""'],
      [{ client, prefix: " \t" }, 'invalid option prefix: " \\t"'],
      [{ client, prefix: 7 }, "invalid option prefix: 7"],
      [{ client, prefix: "p", prefx: "q" }, "unknown option prefx"],
    ];
    for (const [options, message] of refusals) {
      const error = await expectCode(
        () => new RedisCache(options as never),
        "ERR_X_CHECKPOINT_INVALID_OPTION",
      );
      expect(error.message).toContain(message);
    }
  });
});

describe("a Checkpoint on RedisCache", () => {
  it("needs Checkpoint.open: the constructor refuses it with ERR_X_CHECKPOINT_ASYNC_CACHE", async () => {
    const cache = new RedisCache({ client: await connect(), prefix: namespace() });
    await expectCode(
      () => new Checkpoint("orders", { dependencies: [new Dependency("prices")], cache }),
      "ERR_X_CHECKPOINT_ASYNC_CACHE",
    );
  });

  it("a process killed during a downtime: a new process on a fresh client starts paused, recovers the offsets, and persists the recovery", async () => {
    const prefix = namespace();
    const first = startScript(`
      import { createClient } from "redis";
      import { Checkpoint, Dependency } from "@x/checkpoint";
      import { RedisCache } from "@x/checkpoint/redis";
      const at = (m) => new Date(Date.UTC(2025, 0, 1, 10, m));
      const client = await createClient({ url: ${JSON.stringify(REDIS_URL)} }).connect();
      const cache = new RedisCache({ client, prefix: ${JSON.stringify(prefix)} });
      const cp = await Checkpoint.open("orders", { dependencies: [new Dependency("prices")], cache });
      await cp.checkPulse(at(0), { offset: 100n });
      await cp.heartbeat(at(1));
      await cp.checkPulse(at(12), { offset: 112n });
      console.log("down " + cp.dependency("prices").isDown);
      setInterval(() => {}, 1_000);
    `);
    const down = () => first.lines.find((line) => line.startsWith("down "));
    expect(await waitFor(down, 60_000, "the first process's downtime")).toBe("down true");
    first.child.kill("SIGKILL");
    await first.exited;
    expect(await keysUnder(prefix)).toEqual(
      [
        "__orders__state",
        "__orders__state_marker",
        "__orders_prices_checkpoint_state",
        "__orders_prices_checkpoint_marker",
        "__orders_prices_checkpoint_is_down",
      ]
        .map((key) => `${prefix}:${key}`)
        .sort(),
    );

    const dependent = recordingDependent();
    const recovered: unknown[] = [];
    const restarted = await Checkpoint.open("orders", {
      dependent,
      dependencies: [new Dependency("prices")],
      cache: new RedisCache({ client: await connect(), prefix }),
      recoveryCallback: (_cp, dep) => recovered.push(dep.checkpointState),
    });
    expect(dependent.log).toEqual(["pause"]);
    expect(restarted.state).toEqual({ offset: 112n });
    expect(restarted.stateMarker).toEqual(at(12));
    expect(restarted.dependency("prices").isDown).toBe(true);
    expect(restarted.dependency("prices").checkpointMarker).toEqual(at(1));
    await restarted.heartbeat(at(13));
    expect(recovered).toEqual([{ offset: 112n }]);
    expect(dependent.log).toEqual(["pause", "resume"]);

    const later = recordingDependent();
    const again = await Checkpoint.open("orders", {
      dependent: later,
      dependencies: [new Dependency("prices")],
      cache: new RedisCache({ client: await connect(), prefix }),
    });
    expect(again.dependency("prices").isDown).toBe(false);
    expect(again.dependency("prices").checkpointMarker).toEqual(at(13));
    expect(later.log).toEqual([]);
  });
});
