import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { XError } from "@x/core";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { startTcpProxy } from "@x/test-support/tcp-proxy";
import { waitFor } from "@x/test-support/wait-for";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  EntityType,
  openSqliteStorage,
  type ProvenanceStorage,
  RmqStorageClient,
  type RmqStorageClientOptions,
  RmqStorageServer,
  type RmqStorageServerOptions,
} from "../src/index.js";
import { activeConsumers, queueDepth } from "./broker.js";
import { randomId } from "./fixture.js";
import { sandbox, spawnServer } from "./stack.js";

const box = sandbox("quorum");
const inRange0 = () => `0${randomId().slice(1)}`;
beforeAll(() => requireService("RabbitMQ", AMQP_URL), 2_000);
afterAll(() => box.cleanup());

/**
 * A server on `prefix` with quorum queues for range 0 only, stopped when the test finishes. One range: 15
 * quorum queues rather than 165, because each holds file handles of the broker, and the shared test broker's
 * open-file limit (1 024 by default) is soon exhausted, which blocks the whole broker.
 */
async function quorumServer(prefix: string, options: Partial<RmqStorageServerOptions> = {}) {
  const server = await RmqStorageServer.start({
    url: AMQP_URL,
    storage: () => openSqliteStorage(":memory:"),
    prefix,
    queueType: "quorum",
    ranges: "0",
    ...options,
  });
  onTestFinished(() => server.stop());
  return server;
}

/** `rabbitmqctl list_queues name type` for the queues whose names start with `prefix`. */
async function queueTypes(prefix: string): Promise<Map<string, string>> {
  const { stdout } = await promisify(execFile)("rabbitmqctl", [
    "list_queues",
    "-q",
    "--no-table-headers",
    "name",
    "type",
  ]);
  return new Map(
    stdout
      .split("\n")
      .map((line) => line.trim().split(/\s+/) as [string, string])
      .filter(([name]) => name?.startsWith(prefix)),
  );
}

describe("quorum queues", () => {
  it("declares every worker and dead-letter queue as a quorum queue, and writes through them", async () => {
    const prefix = box.prefix();
    const file = box.file();
    await quorumServer(prefix, { storage: `sqlite:${file}` });
    const types = await queueTypes(prefix);
    expect(types.size).toBe(15);
    expect(new Set(types.values())).toEqual(new Set(["quorum"]));
    // A server of the other type is refused, naming the queue, rather than served half one way.
    const classic = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
      ranges: "0",
    }).catch((e: unknown) => e);
    expect(XError.is(classic, "ERR_X_RMQ_STORAGE_TOPOLOGY"), String(classic)).toBe(true);
    const storage = await openSqliteStorage(file);
    onTestFinished(() => storage.close());
    const client = await RmqStorageClient.connect({ url: AMQP_URL, storage, prefix });
    onTestFinished(() => client.close());
    const ids = Array.from({ length: 50 }, inRange0);
    expect(await client.contentAdd(new Map(ids.map((id, i) => [id, BigInt(i)])))).toBe(true);
    expect((await storage.contentGet(ids)).size).toBe(50);
  }, 60_000);

  it("single active consumer holds on quorum queues: the first server writes, a second takes over on stop", async () => {
    const prefix = box.prefix();
    const first = await quorumServer(prefix, { ranges: "0" });
    const second = await quorumServer(prefix, { ranges: "0" });
    const writes = { first: 0, second: 0 };
    first.on("batch", () => writes.first++);
    second.on("batch", () => writes.second++);
    const storage = await openSqliteStorage(":memory:");
    onTestFinished(() => storage.close());
    const client = await RmqStorageClient.connect({ url: AMQP_URL, storage, prefix });
    onTestFinished(() => client.close());
    for (let i = 0; i < 5; i++) expect(await client.contentAdd(new Map([[inRange0(), 1n]]))).toBe(true);
    expect(writes).toEqual({ first: 5, second: 0 });
    await first.stop();
    expect(await client.contentAdd(new Map([[inRange0(), 1n]]))).toBe(true);
    expect(writes).toEqual({ first: 5, second: 1 });
  }, 60_000);

  it("a message whose write keeps failing is dead-lettered after deliveryLimit deliveries", async () => {
    const prefix = box.prefix();
    const failing = await openSqliteStorage(":memory:");
    onTestFinished(() => failing.close());
    let attempts = 0;
    const storage: ProvenanceStorage = Object.assign(Object.create(failing), {
      contentAdd: async () => {
        attempts++;
        return false;
      },
      close: async () => {},
    });
    await quorumServer(prefix, { storage: () => storage, deliveryLimit: 2 });
    const reads = await openSqliteStorage(":memory:");
    onTestFinished(() => reads.close());
    const client = await RmqStorageClient.connect({
      url: AMQP_URL,
      storage: reads,
      prefix,
      waitMinMs: 60_000,
    });
    onTestFinished(() => client.close());
    void client.contentAdd(new Map([[inRange0(), 1n]]));
    const dead = `${prefix}content.dead`;
    await waitFor(async () => (await queueDepth(dead))?.ready === 1, 30_000, "the dead-lettered message");
    // The first delivery and two more (the limit), then the broker dead-letters it: no more attempts.
    expect(attempts).toBe(3);
  }, 60_000);

  it("a bad deliveryLimit, or one without quorum queues, is refused before anything else", async () => {
    for (const options of [
      { deliveryLimit: 3 },
      { queueType: "quorum", deliveryLimit: 0 },
      { queueType: "stream" },
    ] as const) {
      const error = await RmqStorageServer.start({
        url: "amqp://guest:guest@127.0.0.1:1",
        storage: () => openSqliteStorage(":memory:"),
        ...(options as object),
      }).catch((e: unknown) => e);
      expect(XError.is(error, "ERR_X_RMQ_STORAGE_INVALID_OPTION"), String(error)).toBe(true);
    }
  });
});

/**
 * A client on a fresh prefix whose range-0 content queue takes nothing and refuses publishes: the broker
 * nacks every message routed to it. Everything is closed when the test finishes.
 */
async function clientOnRefusingQueue(options: Partial<RmqStorageClientOptions> = {}) {
  const prefix = box.prefix();
  const storage = await openSqliteStorage(":memory:");
  onTestFinished(() => storage.close());
  const client = await RmqStorageClient.connect({ url: AMQP_URL, storage, prefix, ...options });
  onTestFinished(() => client.close());
  const connection = await amqp.connect(AMQP_URL);
  onTestFinished(() => connection.close());
  const channel = await connection.createChannel();
  const queue = `${prefix}content_add.unknown.0`;
  await channel.assertQueue(queue, { arguments: { "x-max-length": 0, "x-overflow": "reject-publish" } });
  await channel.bindQueue(queue, `${prefix}content`, "content_add.unknown.0");
  return client;
}

describe("a broker that refuses a publish", () => {
  it("resolves the call false and moves the client to a fresh connection", async () => {
    const client = await clientOnRefusingQueue();
    const reconnects: number[] = [];
    client.on("reconnect", ({ attempt }) => reconnects.push(attempt));
    const started = performance.now();
    expect(await client.contentAdd(new Map([[inRange0(), 1n]]))).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000);
    await waitFor(() => reconnects.length > 0, 10_000, "the client to reconnect");
  }, 30_000);

  it("resolves every concurrent call false, none rejects, while the nacked connection is closing", async () => {
    // Seen in the cluster's leader-kill test: after a nack closed the connection, the next publish on it threw
    // "Connection closing" out of the call, or out of the resend after a reconnect as an unhandled rejection.
    const client = await clientOnRefusingQueue({ itemsPerMessage: 1 });
    // Two calls of 1 000 one-item messages: both wait for room in the confirm window when the first nack comes.
    const calls = Array.from({ length: 2 }, () =>
      client.contentAdd(new Map(Array.from({ length: 1_000 }, () => [inRange0(), 1n] as const))),
    );
    expect(await Promise.all(calls)).toEqual([false, false]);
  }, 60_000);
});

describe("several broker addresses", () => {
  it("client and server connect to the first that answers and move to the next when theirs goes away", async () => {
    const prefix = box.prefix();
    const [serverProxy, clientProxy] = [await startTcpProxy(AMQP_URL), await startTcpProxy(AMQP_URL)];
    onTestFinished(() => serverProxy.close());
    onTestFinished(() => clientProxy.close());
    const refused = "amqp://guest:guest@127.0.0.1:1";
    const file = box.file();
    const server = await quorumServer(prefix, {
      url: [refused, serverProxy.url, AMQP_URL],
      storage: `sqlite:${file}`,
    });
    expect(server.toJSON().url).toEqual(
      [refused, serverProxy.url, AMQP_URL].map((u) => u.replace(":guest@", ":***@")),
    );
    const storage = await openSqliteStorage(file);
    onTestFinished(() => storage.close());
    const client = await RmqStorageClient.connect({ url: [clientProxy.url, AMQP_URL], storage, prefix });
    onTestFinished(() => client.close());
    const ids = Array.from({ length: 20 }, inRange0);
    expect(await client.contentAdd(new Map(ids.slice(0, 10).map((id) => [id, 1n])))).toBe(true);
    // Both proxies go away for good: each side moves on to the broker's own address.
    const reconnected = { server: false, client: false };
    server.on("reconnect", () => {
      reconnected.server = true;
    });
    client.on("reconnect", () => {
      reconnected.client = true;
    });
    await Promise.all([serverProxy.close(), clientProxy.close()]);
    await waitFor(() => reconnected.server && reconnected.client, 30_000, "both to notice");
    await waitFor(
      async () => (await activeConsumers(prefix)).size === 10,
      60_000,
      "the server's consumers back",
    );
    expect(await client.contentAdd(new Map(ids.slice(10).map((id) => [id, 1n])))).toBe(true);
    expect((await storage.entityGetAll(EntityType.CONTENT)).size).toBe(20);
  }, 120_000);

  it("serve takes --amqp several times and --queue-type quorum", async () => {
    const prefix = box.prefix();
    const server = await spawnServer([
      "--amqp",
      "amqp://guest:guest@127.0.0.1:1",
      "--amqp",
      AMQP_URL,
      "--storage",
      "sqlite::memory:",
      "--prefix",
      prefix,
      "--queue-type",
      "quorum",
      "--delivery-limit",
      "5",
      "--ranges",
      "0",
    ]);
    onTestFinished(() => {
      server.child.kill("SIGKILL");
    });
    expect((await queueTypes(prefix)).get(`${prefix}content_add.unknown.0`)).toBe("quorum");
    server.child.kill("SIGTERM");
    await waitFor(() => server.child.exitCode !== null, 30_000, "serve to stop");
    expect(server.child.exitCode).toBe(0);
  }, 90_000);
});
