// Redis streams: the adapter against the machine's Redis, and against a private redis-server for the
// broker restart.

import { recordingLogger } from "@x/test-support/recording-logger";
import { requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../src/index.js";
import { type RedisStreamRecord, redisStream } from "../src/redis.js";
import { runScenario, type ScenarioEngine } from "./engine-scenario.js";
import { expectCode } from "./helpers.js";
import { addRedisEntries } from "./indexed-records.js";
import { type PrivateServer, startPrivateServer } from "./private-server.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
// 10 000 records through a checkpoint, with restarts, on a shared and loaded machine: generous deadlines.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const COUNT = 10_000;
const keys: string[] = [];

async function connect(url = REDIS_URL) {
  const client = createClient({
    url,
    socket: { reconnectStrategy: (retries) => Math.min(50 + retries * 50, 500) },
  });
  client.on("error", () => {}); // reconnects by itself; the stream logs its failed reads
  await client.connect();
  return client;
}

/** A fresh stream of `count` entries `{ i }`, deleted after the file. */
async function produce(url: string, count: number): Promise<string> {
  const key = uniqueName("orders");
  keys.push(key);
  const client = await connect(url);
  await addRedisEntries(client, key, count);
  client.destroy();
  return key;
}

function engine(
  url: string,
  key: string,
  restart?: () => Promise<void>,
): ScenarioEngine<RedisStreamRecord, string> {
  return {
    async open() {
      const client = await connect(url);
      const stream = redisStream({ client, key, blockMs: 200, retryMaxMs: 500 });
      return {
        stream,
        async close() {
          await stream.close();
          client.destroy();
        },
      };
    },
    indexOf: (record) => Number(record.fields.i),
    restart,
  };
}

const scenario = { count: COUNT, stallAt: 5_000, watchMs: 1_000 };

beforeAll(() => requireService("Redis", REDIS_URL));
afterAll(async () => {
  const client = await connect();
  if (keys.length > 0) await client.del(keys);
  client.destroy();
});

describe("redisStream on Redis", () => {
  it("pauses the reads during a downtime and replays from the checkpointed id", async () => {
    await runScenario(engine(REDIS_URL, await produce(REDIS_URL, COUNT)), "plain", scenario);
  });

  it("recovers the same way after a process restart during the downtime (SqliteCache)", async () => {
    await runScenario(engine(REDIS_URL, await produce(REDIS_URL, COUNT)), "process-restart", scenario);
  });

  it("starts at the first entry, the next one, an id or a time; seeks to an id; refuses bad options", async () => {
    const key = await produce(REDIS_URL, 10);
    const client = await connect();
    const indices = async (from: Parameters<typeof redisStream>[0]["from"], take: number) => {
      const stream = redisStream({ client, key, from, blockMs: 50 });
      const seen: number[] = [];
      for await (const record of stream) {
        seen.push(Number(record.fields.i));
        if (seen.length === take) break;
      }
      return seen;
    };
    try {
      expect(await indices("first", 3)).toEqual([0, 1, 2]);
      const all = (await client.xRange(key, "-", "+")) ?? [];
      expect(await indices({ id: all[4]!.id }, 2)).toEqual([4, 5]);
      const fourth = Number(all[4]!.id.split("-")[0]);
      const atTime = await indices({ time: new Date(fourth) }, 1);
      expect(atTime[0]).toBeLessThanOrEqual(4);

      const next = redisStream({ client, key, from: "next", blockMs: 50 });
      const first = next.next();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await client.xAdd(key, "*", { i: "10" });
      expect((await first).value?.fields).toEqual({ i: "10" });
      await next.seek(all[8]!.id);
      expect(next.position).toBeUndefined();
      expect((await next.next()).value?.id).toBe(all[8]!.id);
      expect(next.position).toBe(all[8]!.id);
      await expectCode(() => next.seek("not-an-id"), ErrorCode.INVALID_OPTION);
      await next.close();
      await next.close(); // idempotent
      expect(await next.next()).toEqual({ done: true, value: undefined });

      // Calls made together are served in call order; a pause waits for a read in flight and drops it.
      {
        await using together = redisStream({ client, key, blockMs: 50 });
        const results = await Promise.all([together.next(), together.next(), together.next()]);
        expect(results.map((result) => result.value?.fields.i)).toEqual(["0", "1", "2"]);
        await together.pause();
        const waiting = together.next();
        let settled = false;
        void waiting.then(() => {
          settled = true;
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(settled).toBe(false);
        together.resume();
        expect((await waiting).value?.fields.i).toBe("3");
      }

      // After a full batch the next one is read ahead; a pause drops it, and nothing is skipped or repeated.
      {
        const ahead = await produce(REDIS_URL, 25);
        await using stream = redisStream({ client, key: ahead, batchSize: 10, blockMs: 50 });
        expect((await stream.next()).value?.fields.i).toBe("0");
        await vi.waitFor(() => expect(stream.deliveries).toBe(20));
        await stream.pause();
        expect(stream.deliveries).toBe(20);
        stream.resume();
        const rest: number[] = [];
        for await (const record of stream) if (rest.push(Number(record.fields.i)) === 24) break;
        expect(rest).toEqual(Array.from({ length: 24 }, (_, index) => index + 1));
        // the resume read 1–10, then 11–20 and 21–24 ahead; a short batch reads nothing ahead
        expect(stream.deliveries).toBe(20 + 24);
      }

      const plain = uniqueName("plain");
      keys.push(plain);
      await client.set(plain, "not a stream");
      const wrong = redisStream({ client, key: plain });
      await expectCode(() => wrong.next(), ErrorCode.NOT_A_STREAM);
      await wrong.close();
      await expectCode(() => redisStream({ client, key: "" }), ErrorCode.INVALID_OPTION);
      await expectCode(() => redisStream({ client: {} as never, key }), ErrorCode.INVALID_OPTION);
      await expectCode(() => redisStream({ client, key, from: { id: "x" } }), ErrorCode.INVALID_OPTION);
      await expectCode(() => redisStream({ client, key, blockMs: 0 }), ErrorCode.INVALID_OPTION);
      await expectCode(() => redisStream({ client, key, retryMaxMs: 2 ** 31 }), ErrorCode.INVALID_OPTION);
    } finally {
      client.destroy();
    }
  });
});

describe("redisStream on a private redis-server that restarts", () => {
  let server: PrivateServer;
  beforeAll(async () => {
    server = await startPrivateServer("redis-server", "redis-server", (port, dir) => [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
      "--save",
      "",
    ]);
  }, 60_000);
  afterAll(() => server?.stop());

  it("reads on across a restart in the middle of the stream: none skipped, none twice", async () => {
    const url = `redis://127.0.0.1:${server.port}`;
    const key = await produce(url, 3_000);
    const client = await connect(url);
    const { logger, messages } = recordingLogger();
    const stream = redisStream({ client, key, batchSize: 100, blockMs: 100, retryMaxMs: 200, logger });
    const seen: number[] = [];
    try {
      for await (const record of stream) {
        seen.push(Number(record.fields.i));
        if (seen.length === 1_000) await server.restart();
        if (seen.length === 3_000) break;
      }
    } finally {
      await stream.close();
      client.destroy();
    }
    expect(seen).toEqual(Array.from({ length: 3_000 }, (_, index) => index));
    expect(messages("warn").every((message) => message === "broker read failed: reopening")).toBe(true);
  });

  it("keeps the pause across the restart and replays from the checkpointed id", async () => {
    const url = `redis://127.0.0.1:${server.port}`;
    await runScenario(
      engine(url, await produce(url, COUNT), () => server.restart()),
      "broker-restart",
      scenario,
    );
  });
});
