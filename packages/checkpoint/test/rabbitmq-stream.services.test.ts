// RabbitMQ stream queues over AMQP 0.9.1: the adapter against the machine's RabbitMQ, and against a private
// RabbitMQ node for the broker restart.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { recordingLogger } from "@x/test-support/recording-logger";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../src/index.js";
import { type AmqpStreamMessage, rabbitmqStream } from "../src/rabbitmq-stream.js";
import { runScenario, type ScenarioEngine } from "./engine-scenario.js";
import { expectCode } from "./helpers.js";
import { freePort, type PrivateServer, startPrivateServer } from "./private-server.js";

// 10 000 records through a checkpoint, with restarts, on a shared and loaded machine: generous deadlines.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const COUNT = 10_000;
const created: { url: string; queue: string }[] = [];

/** A fresh stream queue of `count` messages `{ i }`, deleted after the file. */
async function produce(url: string, count: number): Promise<string> {
  const queue = uniqueName("orders");
  created.push({ url, queue });
  const connection = await amqp.connect(url);
  const channel = await connection.createConfirmChannel();
  await channel.assertQueue(queue, { durable: true, arguments: { "x-queue-type": "stream" } });
  for (let index = 0; index < count; index++)
    channel.sendToQueue(queue, Buffer.from(JSON.stringify({ i: index })), { persistent: true });
  await channel.waitForConfirms();
  await connection.close();
  return queue;
}

const indexOf = (message: AmqpStreamMessage) =>
  (JSON.parse(Buffer.from(message.content).toString()) as { i: number }).i;

function engine(
  url: string,
  queue: string,
  restart?: () => Promise<void>,
): ScenarioEngine<AmqpStreamMessage, number> {
  return {
    async open() {
      const stream = rabbitmqStream({ connect: () => amqp.connect(url), queue, retryMaxMs: 500 });
      return { stream, close: () => stream.close() };
    },
    indexOf,
    restart,
  };
}

const scenario = { count: COUNT, stallAt: 5_000, watchMs: 1_000 };

beforeAll(() => requireService("RabbitMQ", AMQP_URL));
afterAll(async () => {
  const shared = created.filter((entry) => entry.url === AMQP_URL);
  if (shared.length === 0) return;
  const connection = await amqp.connect(AMQP_URL);
  const channel = await connection.createChannel();
  for (const { queue } of shared) await channel.deleteQueue(queue);
  await connection.close();
});

describe("rabbitmqStream on RabbitMQ", () => {
  it("reads a stream longer than a few prefetches, acknowledging once per quarter prefetch", async () => {
    const queue = await produce(AMQP_URL, 25);
    for (const prefetch of [1, 2, 3, 8]) {
      let acks = 0;
      const connect = async () => {
        const connection = await amqp.connect(AMQP_URL);
        const createChannel = connection.createChannel.bind(connection);
        connection.createChannel = async () => {
          const channel = await createChannel();
          const ack = channel.ack.bind(channel);
          channel.ack = (message, allUpTo) => {
            acks++;
            ack(message, allUpTo);
          };
          return channel;
        };
        return connection;
      };
      const stream = rabbitmqStream({ connect, queue, prefetch });
      const seen: number[] = [];
      for await (const message of stream) if (seen.push(indexOf(message)) === 25) break;
      expect(seen).toEqual(Array.from({ length: 25 }, (_, index) => index));
      expect(acks).toBeGreaterThan(0);
      expect(acks).toBeLessThanOrEqual(Math.ceil(25 / Math.ceil(prefetch / 4)));
    }
  });

  it("cancels the consumer during a downtime and replays from the checkpointed offset", async () => {
    await runScenario(engine(AMQP_URL, await produce(AMQP_URL, COUNT)), "plain", scenario);
  });

  it("recovers the same way after a process restart during the downtime (SqliteCache)", async () => {
    await runScenario(engine(AMQP_URL, await produce(AMQP_URL, COUNT)), "process-restart", scenario);
  });

  it("starts at the first message, an offset or a time; seeks; refuses bad options and non-stream queues", async () => {
    const queue = await produce(AMQP_URL, 10);
    const connect = () => amqp.connect(AMQP_URL);
    const indices = async (from: "first" | { offset: number } | { time: Date }, take: number) => {
      const stream = rabbitmqStream({ connect, queue, from });
      const seen: number[] = [];
      for await (const message of stream) {
        seen.push(indexOf(message));
        if (seen.length === take) break;
      }
      return seen;
    };
    expect(await indices("first", 3)).toEqual([0, 1, 2]);
    expect(await indices({ offset: 4 }, 2)).toEqual([4, 5]);
    expect(await indices({ time: new Date(0) }, 1)).toEqual([0]);
    const orders = rabbitmqStream({ connect, queue });
    expect(indexOf((await orders.next()).value!)).toBe(0);
    await orders.seek(8);
    expect(orders.position).toBeUndefined();
    expect(indexOf((await orders.next()).value!)).toBe(8);
    expect(orders.position).toBe(8);
    await expectCode(() => orders.seek(-1), ErrorCode.INVALID_OPTION);
    await orders.close();
    expect(await orders.next()).toEqual({ done: true, value: undefined });
    await expectCode(() => rabbitmqStream({ connect, queue: "" }), ErrorCode.INVALID_OPTION);
    await expectCode(() => rabbitmqStream({ connect, queue, prefetch: 0 }), ErrorCode.INVALID_OPTION);

    const classic = uniqueName("classic");
    const connection = await connect();
    const channel = await connection.createChannel();
    await channel.assertQueue(classic, { autoDelete: true });
    channel.sendToQueue(classic, Buffer.from("{}"));
    for (const name of [classic, uniqueName("missing")]) {
      const wrong = rabbitmqStream({ connect, queue: name });
      await expectCode(() => wrong.next(), ErrorCode.NOT_A_STREAM);
      await wrong.close();
    }
    await connection.close();
  });
});

describe("rabbitmqStream on a private RabbitMQ node that restarts", () => {
  let server: PrivateServer;
  beforeAll(async () => {
    const distPort = await freePort();
    const node = `x_checkpoint_${process.pid}_${Date.now().toString(36)}@localhost`;
    const script = "/usr/lib/rabbitmq/bin/rabbitmq-server";
    server = await startPrivateServer(
      "rabbitmq-server",
      existsSync(script) ? script : "rabbitmq-server",
      () => [],
      (port, dir) => {
        // No plugins (the management listener would take the shared node's port), guest from 127.0.0.1.
        writeFileSync(join(dir, "plugins"), "[].\n");
        writeFileSync(join(dir, "rabbitmq.conf"), `listeners.tcp.default = 127.0.0.1:${port}\n`);
        return {
          RABBITMQ_NODENAME: node,
          RABBITMQ_NODE_PORT: String(port),
          RABBITMQ_DIST_PORT: String(distPort),
          RABBITMQ_MNESIA_BASE: join(dir, "mnesia"),
          RABBITMQ_LOG_BASE: join(dir, "log"),
          RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, "plugins"),
          RABBITMQ_CONFIG_FILE: join(dir, "rabbitmq"),
          RABBITMQ_PID_FILE: join(dir, "pid"),
        };
      },
    );
  }, 180_000);
  afterAll(() => server?.stop(), 60_000);

  it("reconnects after a restart in the middle of the stream: none skipped, none twice", async () => {
    const url = `amqp://guest:guest@127.0.0.1:${server.port}`;
    const queue = await produce(url, 3_000);
    const { logger, messages } = recordingLogger();
    const stream = rabbitmqStream({
      connect: () => amqp.connect(url),
      queue,
      prefetch: 100,
      retryMaxMs: 500,
      logger,
    });
    const seen: number[] = [];
    try {
      for await (const message of stream) {
        seen.push(indexOf(message));
        if (seen.length === 1_000) await server.restart();
        if (seen.length === 3_000) break;
      }
    } finally {
      await stream.close();
    }
    expect(seen).toEqual(Array.from({ length: 3_000 }, (_, index) => index));
    expect(messages("warn")).toContain("broker read failed: reopening");
  }, 180_000);

  it("keeps the consumer cancelled across the restart and replays from the checkpointed offset", async () => {
    const url = `amqp://guest:guest@127.0.0.1:${server.port}`;
    await runScenario(
      engine(url, await produce(url, COUNT), () => server.restart()),
      "broker-restart",
      scenario,
    );
  }, 180_000);
});
