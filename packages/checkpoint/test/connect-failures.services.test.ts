// A configuration mistake fails fast in every adapter: a refused login or virtual host at once with the
// broker's reason, an address where nothing answers within about 3 s; and a missing Redis key is refused.
import { connect } from "@nats-io/transport-node";
import { recordingLogger } from "@x/test-support/recording-logger";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import amqp from "amqplib";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../src/index.js";
import { rabbitmqStream } from "../src/rabbitmq-stream.js";
import { redisStream } from "../src/redis.js";
import { expectCode } from "./helpers.js";
import { freePort, type PrivateServer, startPrivateServer } from "./private-server.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Rejects with the code of the first `next()`, and how long it took, in ms. */
async function firstRead(stream: { next(): Promise<unknown>; close(): Promise<void> }, code: string) {
  const started = Date.now();
  const error = await expectCode(() => stream.next(), code);
  const elapsedMs = Date.now() - started;
  await stream.close();
  return { error, elapsedMs };
}

describe("redisStream with a client that is not connected yet", () => {
  let server: PrivateServer;
  beforeAll(async () => {
    await requireService("Redis", REDIS_URL);
    server = await startPrivateServer("redis-server", "redis-server", (port, dir) => [
      ...["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""],
      ...["--requirepass", "right-password"],
    ]);
  });
  afterAll(() => server?.stop());

  it("fails at once with the server's reason when the password is wrong, and closes the client", async () => {
    const client = createClient({ url: `redis://:wrong@127.0.0.1:${server.port}` });
    const { error, elapsedMs } = await firstRead(
      redisStream({ client, key: "orders" }),
      ErrorCode.ACCESS_REFUSED,
    );
    expect(error.message).toContain('Redis stream "orders"');
    expect(error.message).toContain("WRONGPASS");
    expect(error.message).not.toContain("wrong@");
    expect(elapsedMs).toBeLessThan(2_000);
    expect(client.isOpen).toBe(false);
  });

  it("fails within about 3 s when nothing listens, naming the address", async () => {
    const port = await freePort();
    const { logger, records } = recordingLogger();
    const client = createClient({ url: `redis://127.0.0.1:${port}` });
    const { error, elapsedMs } = await firstRead(
      redisStream({ client, key: "orders", logger }),
      ErrorCode.UNREACHABLE,
    );
    expect(error.message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    expect(elapsedMs).toBeGreaterThan(1_000);
    expect(elapsedMs).toBeLessThan(4_500);
    expect(records[0]?.fields.stream).toBe(`Redis stream "orders" at redis://127.0.0.1:${port}`);
    expect(client.isOpen).toBe(false);
  });

  it("connects the client itself and reads; refuses a key that does not exist", async () => {
    const key = uniqueName("orders");
    const producer = await createClient({ url: REDIS_URL }).connect();
    await producer.xAdd(key, "*", { i: "0" });
    const client = createClient({ url: REDIS_URL });
    const stream = redisStream({ client, key });
    expect((await stream.next()).value).toMatchObject({ fields: { i: "0" } });
    await stream.close();
    expect(client.isOpen).toBe(false);

    const missing = redisStream({ client: producer, key: uniqueName("missing") });
    const { error } = await firstRead(missing, ErrorCode.NOT_A_STREAM);
    expect(error.message).toContain("does not exist");
    await producer.del(key);
    producer.destroy();
  });
});

describe("rabbitmqStream with a wrong address or login", () => {
  beforeAll(() => requireService("RabbitMQ", AMQP_URL));
  const url = new URL(AMQP_URL);

  it("fails at once with the broker's reason for a wrong password or virtual host", async () => {
    const wrongPassword = new URL(url);
    wrongPassword.password = "wrong";
    const login = await firstRead(
      rabbitmqStream({ connect: () => amqp.connect(wrongPassword.href), queue: "orders" }),
      ErrorCode.ACCESS_REFUSED,
    );
    expect(login.error.message).toContain('RabbitMQ stream queue "orders"');
    expect(login.error.message).toContain("ACCESS_REFUSED");
    expect(login.elapsedMs).toBeLessThan(2_000);

    const vhost = new URL(url);
    vhost.pathname = `/${uniqueName("no-vhost")}`;
    const refused = await firstRead(
      rabbitmqStream({ connect: () => amqp.connect(vhost.href), queue: "orders" }),
      ErrorCode.ACCESS_REFUSED,
    );
    expect(refused.error.message).toContain("virtual host");
    expect(refused.elapsedMs).toBeLessThan(2_000);
  });

  it("fails within about 3 s when nothing listens, naming the queue and the address", async () => {
    const port = await freePort();
    const { logger, records } = recordingLogger();
    const { error, elapsedMs } = await firstRead(
      rabbitmqStream({ connect: () => amqp.connect(`amqp://127.0.0.1:${port}`), queue: "orders", logger }),
      ErrorCode.UNREACHABLE,
    );
    expect(error.message).toContain('RabbitMQ stream queue "orders"');
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(elapsedMs).toBeGreaterThan(1_000);
    expect(elapsedMs).toBeLessThan(4_500);
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((record) => record.fields.stream === 'RabbitMQ stream queue "orders"')).toBe(true);
  });
});

describe("NATS: the connection that natsStream is given fails fast", () => {
  let server: PrivateServer;
  beforeAll(async () => {
    server = await startPrivateServer("nats-server", "nats-server", (port, dir) => [
      ...["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir],
      ...["--user", "app", "--pass", "right-password"],
    ]);
  });
  afterAll(() => server?.stop());

  // The documented recipe: connect() (without waitOnFirstConnect) rejects before natsStream exists.
  it("rejects at once with the server's reason for bad credentials or nothing listening", async () => {
    const started = Date.now();
    await expect(
      connect({ servers: `127.0.0.1:${server.port}`, user: "app", pass: "wrong", maxReconnectAttempts: -1 }),
    ).rejects.toThrow(/Authorization Violation/);
    const port = await freePort();
    await expect(connect({ servers: `127.0.0.1:${port}`, maxReconnectAttempts: -1 })).rejects.toThrow(
      /connection refused/,
    );
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
