import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { promisify } from "node:util";
import { XError } from "@x/core";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { startTcpProxy } from "@x/test-support/tcp-proxy";
import { waitFor } from "@x/test-support/wait-for";
import amqp, { type ConsumeMessage } from "amqplib";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { declareTopology, topology } from "../src/amqp.js";
import { connectBroker } from "../src/connect.js";
import {
  EntityType,
  openSqliteStorage,
  type ProvenanceStorage,
  RmqStorageClient,
  type RmqStorageClientOptions,
  RmqStorageServer,
  type Sha1,
} from "../src/index.js";
import { workerQueues } from "../src/routing.js";
import { encodeReply } from "../src/wire.js";
import { queueDepth } from "./broker.js";
import { apply, generateFixture, randomId } from "./fixture.js";
import { directDump, fileDump, reader, sandbox } from "./stack.js";

const box = sandbox("cs");
beforeAll(() => requireService("RabbitMQ", AMQP_URL), 2_000);
afterAll(() => box.cleanup());

const unreachable = "amqp://guest:guest@127.0.0.1:1";
const idIn = (range: string) => range + randomBytes(20).toString("hex").slice(1);
const code = async (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (e: unknown) => (XError.is(e) ? e.code : String(e)),
  );

/**
 * A client on a fresh topology prefix whose only consumer is the hand-driven {@link fakeServer}, reading from
 * an in-memory storage; all three are closed when the test finishes, whatever its outcome: the client first,
 * then its storage, then the fake server (Vitest runs `onTestFinished` callbacks in reverse order of
 * registration).
 */
async function clientOnFakeServer(options: Partial<RmqStorageClientOptions>) {
  const prefix = box.prefix();
  const fake = await fakeServer(prefix);
  onTestFinished(() => fake.close());
  const storage = await openSqliteStorage(":memory:");
  onTestFinished(() => storage.close());
  const client = await RmqStorageClient.connect({ url: AMQP_URL, storage, prefix, ...options });
  onTestFinished(() => client.close());
  return { prefix, fake, storage, client };
}

/** Stands in for a server on the content_add queues: records requests and replies only when told to. */
async function fakeServer(prefix: string) {
  const connection = await amqp.connect(AMQP_URL);
  await declareTopology(connection, topology(prefix));
  const channel = await connection.createChannel();
  const received: ConsumeMessage[] = [];
  for (const spec of workerQueues.filter((q) => q.method === "content_add"))
    await channel.consume(prefix + spec.name, (m) => m && received.push(m), { noAck: true });
  return {
    received,
    reply: (
      m: ConsumeMessage,
      ok: boolean,
      ids: string[],
      correlationId = m.properties.correlationId as string,
    ) =>
      channel.sendToQueue(m.properties.replyTo as string, encodeReply(ok, ids, ok ? undefined : "refused"), {
        correlationId,
      }),
    close: () => connection.close(),
  };
}

/**
 * A storage factory for `file` whose `contentAdd` takes `delayMs` longer; `track(+1)` when a call starts,
 * `track(-1)` when its delay is over.
 */
function slowContentAdd(file: string, delayMs: number, track: (delta: number) => void = () => {}) {
  return async () => {
    const inner = await openSqliteStorage(file);
    return new Proxy(inner, {
      get: (target, key) => {
        if (key === "contentAdd")
          return async (m: Map<Sha1, bigint>) => {
            track(1);
            await new Promise((r) => setTimeout(r, delayMs));
            track(-1);
            return target.contentAdd(m);
          };
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
}

async function realStack(
  options: {
    file?: string;
    maxItemsPerWrite?: number;
    maxConcurrentWrites?: number;
    itemsPerMessage?: number;
    storage?: () => Promise<ProvenanceStorage>;
  } = {},
) {
  const [file, prefix] = [options.file ?? box.file(), box.prefix()];
  const server = await RmqStorageServer.start({
    url: AMQP_URL,
    storage: options.storage ?? (() => openSqliteStorage(file)),
    prefix,
    ...(options.maxItemsPerWrite ? { maxItemsPerWrite: options.maxItemsPerWrite } : {}),
    ...(options.maxConcurrentWrites ? { maxConcurrentWrites: options.maxConcurrentWrites } : {}),
  });
  const local = await reader(file);
  const client = await RmqStorageClient.connect({
    url: AMQP_URL,
    storage: local,
    prefix,
    waitMinMs: 30_000,
    ...(options.itemsPerMessage ? { itemsPerMessage: options.itemsPerMessage } : {}),
  });
  return {
    file,
    prefix,
    server,
    client,
    local,
    close: async () => {
      await client.close();
      await local.close();
      await server.stop();
    },
  };
}

describe("options", () => {
  it("client: a bad option rejects with ERR_X_RMQ_STORAGE_INVALID_OPTION naming it, before any connection", async () => {
    const storage = await openSqliteStorage(":memory:");
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ storage: { contentAdd() {} } }, "storage"],
      [{ storage, waitMinMs: 0 }, "waitMinMs"],
      [{ storage, waitPerBatchMs: -1 }, "waitPerBatchMs"],
      [{ storage, waitMinMs: 2 ** 31 }, "waitMinMs: 2147483648 (expected a duration in ms more than 0 to"],
      [{ storage, waitPerBatchMs: 2 ** 31 }, "waitPerBatchMs: 2147483648"],
      [{ storage, waitMin: 5 }, "waitMin"],
      [{ storage, waitPerBatch: 5 }, "waitPerBatch"],
      [{ storage, heartbeat: 10 }, "heartbeat"],
      [{ storage, heartbeatMs: 1.5 }, "heartbeatMs"],
      [{ storage, heartbeatMs: 3_600_001 }, "heartbeatMs"],
      [{ storage, itemsPerMessage: 0 }, "itemsPerMessage"],
      [{ storage, itemsPerMessage: 100_001 }, "itemsPerMessage"],
      [{ storage, batchSize: 100 }, "this option is now itemsPerMessage"],
      [{ storage, url: "http://example.org" }, "url"],
      [{ storage, colour: "blue" }, "colour"],
    ];
    for (const [options, name] of cases) {
      const started = Date.now();
      const error = await RmqStorageClient.connect({ url: unreachable, ...options } as never).catch(
        (e: unknown) => e,
      );
      expect(XError.is(error, "ERR_X_RMQ_STORAGE_INVALID_OPTION"), `${name}: ${String(error)}`).toBe(true);
      expect((error as Error).message).toContain(name);
      expect(Date.now() - started).toBeLessThan(500);
    }
    await storage.close();
  });

  it("heartbeatMs is negotiated in whole seconds, rounded up; 0 disables heartbeats", async () => {
    for (const [heartbeatMs, seconds] of [
      [1_500, 2],
      [10_000, 10],
      [0, 0],
    ] as const) {
      const connection = await connectBroker({ url: AMQP_URL, heartbeatMs, timeoutMs: 5_000 });
      const negotiated = (connection.connection as unknown as { heartbeat: number }).heartbeat;
      await connection.close();
      expect(negotiated, `heartbeatMs ${heartbeatMs}`).toBe(seconds);
    }
  });

  it("client: no broker within connectTimeoutMs rejects with ERR_X_RMQ_STORAGE_UNREACHABLE", async () => {
    const storage = await openSqliteStorage(":memory:");
    const started = Date.now();
    expect(await code(RmqStorageClient.connect({ url: unreachable, storage, connectTimeoutMs: 400 }))).toBe(
      "ERR_X_RMQ_STORAGE_UNREACHABLE",
    );
    expect(Date.now() - started).toBeLessThan(3_000);
    await storage.close();
  });

  it("server: a bad option rejects naming it before anything else", async () => {
    let opened = 0;
    const storage = () => {
      opened++;
      return openSqliteStorage(":memory:");
    };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ storage, maxItemsPerWrite: 100_001 }, "maxItemsPerWrite"],
      [{ storage, batchSize: 100 }, "this option is now maxItemsPerWrite"],
      [{ storage, maxConcurrentWrites: 0 }, "maxConcurrentWrites"],
      [{ storage, maxConcurrentWrites: 1.5 }, "maxConcurrentWrites"],
      [{ storage, prefetch: 0 }, "prefetch"],
      [{ storage, prefetch: 65_536 }, "prefetch"],
      [{ storage, heartbeat: 10 }, "heartbeat"],
      [{ storage, heartbeatMs: -1 }, "heartbeatMs"],
      [{ storage, processes: 2 }, "processes"],
      [{ storage, ranges: "8-0" }, "ranges"],
      [{ storage, ranges: "0-g" }, "ranges"],
      [{ storage, ranges: ["0", "0"] }, "ranges"],
      [{ storage, ranges: [] }, "ranges"],
      [{ storage, standbyWaitMs: -1 }, "standbyWaitMs"],
      [{ storage: "mysql://db" }, "storage"],
      [{ storage, url: "amqp:" }, "url"],
    ];
    for (const [options, name] of cases) {
      const error = await RmqStorageServer.start({ url: unreachable, ...options } as never).catch(
        (e: unknown) => e,
      );
      expect(XError.is(error, "ERR_X_RMQ_STORAGE_INVALID_OPTION"), `${name}: ${String(error)}`).toBe(true);
      expect((error as Error).message).toContain(name);
    }
    expect(opened).toBe(0);
    expect(await code(RmqStorageServer.start({ url: unreachable, storage, connectTimeoutMs: 300 }))).toBe(
      "ERR_X_RMQ_STORAGE_UNREACHABLE",
    );
    expect(
      await code(RmqStorageServer.start({ url: unreachable, storage: "sqlite:/nonexistent/dir/x.db" })),
    ).toBe("ERR_X_RMQ_STORAGE_BACKEND");
  });

  it("server: a queue that exists with other arguments rejects with ERR_X_RMQ_STORAGE_TOPOLOGY naming it", async () => {
    const prefix = box.prefix();
    const connection = await amqp.connect(AMQP_URL);
    const channel = await connection.createChannel();
    await channel.assertQueue(`${prefix}content_add.unknown.3`, { durable: true });
    await connection.close();
    const error = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
    }).catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_RMQ_STORAGE_TOPOLOGY"), String(error)).toBe(true);
    expect((error as Error).message).toContain(`${prefix}content_add.unknown.3`);
  });
});

describe("client", () => {
  it("an aborted signal stops connecting", async () => {
    const storage = await openSqliteStorage(":memory:");
    const signal = AbortSignal.abort();
    expect(await code(RmqStorageClient.connect({ url: AMQP_URL, storage, signal }))).toBe(
      "ERR_X_RMQ_STORAGE_CONNECT",
    );
    await storage.close();
  });

  it("resolves false by the timeout while the broker stays unreachable, and stops reconnecting on close", async () => {
    const prefix = box.prefix();
    const fake = await fakeServer(prefix);
    const proxy = await startTcpProxy(AMQP_URL);
    const storage = await openSqliteStorage(":memory:");
    const client = await RmqStorageClient.connect({
      url: proxy.url,
      storage,
      prefix,
      waitMinMs: 1_000,
      waitPerBatchMs: 0,
    });
    const reconnects: number[] = [];
    client.on("reconnect", ({ attempt }) => reconnects.push(attempt));
    await proxy.close();
    const started = Date.now();
    expect(await client.contentAdd(new Map([[idIn("9"), 1n]]))).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(reconnects.length).toBeGreaterThan(0);
    await client.close();
    const after = reconnects.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(reconnects.length).toBe(after);
    await storage.close();
    await fake.close();
  });

  it("keeps at most about 2 MB of message bodies published but not confirmed by the broker", async () => {
    // A real TCP proxy between the client and the broker that can hold what the broker sends (its
    // confirms and replies), so that nothing gets confirmed for a while.
    const target = new URL(AMQP_URL);
    let holding = false;
    let sent = 0;
    const held: Array<() => void> = [];
    const sockets = new Set<Socket>();
    const proxy = createServer((inbound) => {
      const outbound = connect(Number(target.port || 5672), target.hostname);
      for (const socket of [inbound, outbound]) {
        sockets.add(socket);
        socket.on("error", () => {});
        socket.on("close", () => (socket === inbound ? outbound : inbound).destroy());
      }
      inbound.on("data", (chunk: Buffer) => {
        sent += chunk.length;
        outbound.write(chunk);
      });
      outbound.on("data", (chunk: Buffer) => {
        if (holding) held.push(() => inbound.write(chunk));
        else inbound.write(chunk);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const { port } = proxy.address() as AddressInfo;
    const stack = await realStack();
    const client = await RmqStorageClient.connect({
      url: `amqp://${target.username}:${target.password}@127.0.0.1:${port}`,
      storage: stack.local,
      prefix: stack.prefix,
    });
    holding = true;
    const before = sent;
    // 80 messages of 1 000 items, about 63 kB each: 5 MB, far fewer than the 256 messages of the window.
    const call = client.contentAdd(new Map(Array.from({ length: 80_000 }, () => [randomId(), 1n])));
    let last = -1;
    await waitFor(
      async () => {
        const settled = sent === last && sent - before > 2 * 1024 * 1024;
        last = sent;
        await new Promise((resolve) => setTimeout(resolve, 500));
        return settled;
      },
      20_000,
      "the client to stop publishing",
    );
    expect(sent - before).toBeLessThan(2 * 1024 * 1024 + 200_000);
    holding = false;
    for (const write of held.splice(0)) write();
    expect(await call).toBe(true);
    await client.close();
    await stack.close();
    for (const socket of sockets) socket.destroy();
    proxy.close();
  });

  it("fails fast (false within 1 s) when no queue is bound, saying why", async () => {
    const prefix = box.prefix();
    const storage = await openSqliteStorage(":memory:");
    const client = await RmqStorageClient.connect({ url: AMQP_URL, storage, prefix });
    const failures: Array<{ method: string; error: XError }> = [];
    client.on("failed", (event) => failures.push(event));
    expect(client.lastFailure).toBeUndefined();
    const started = Date.now();
    expect(await client.contentAdd(new Map([[randomId(), 1n]]))).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    const why = client.lastFailure;
    expect(XError.is(why, "ERR_X_RMQ_STORAGE_UNROUTABLE")).toBe(true);
    expect(why?.message).toMatch(/^contentAdd: no queue is bound to exchange \S+ for routing key \S+/);
    expect(why?.message).toContain(`is x-rmq-storage serve running, with prefix ${JSON.stringify(prefix)}?`);
    expect(failures).toEqual([{ method: "contentAdd", error: why }]);
    await client.close();
    await storage.close();
  });

  it("publishes persistent JSON messages with per-call and per-message ids, itemsPerMessage items each", async () => {
    const { fake, client } = await clientOnFakeServer({
      itemsPerMessage: 2,
      waitMinMs: 200,
      waitPerBatchMs: 0,
    });
    const a = [idIn("a"), idIn("a"), idIn("a"), idIn("a"), idIn("a")];
    const b = [idIn("b"), idIn("b"), idIn("b")];
    const data = new Map([...a, ...b].map((id, i) => [id, BigInt(i)]));
    expect(await client.contentAdd(data)).toBe(false);
    expect(fake.received).toHaveLength(5);
    const [first] = fake.received;
    const props = first?.properties;
    expect(props?.deliveryMode).toBe(2);
    expect(props?.contentType).toBe("application/json");
    expect(new Set(fake.received.map((m) => m.properties.correlationId)).size).toBe(1);
    expect(new Set(fake.received.map((m) => m.properties.messageId)).size).toBe(5);
    const bodies = fake.received.map((m) => [m.fields.routingKey, JSON.parse(m.content.toString())]);
    expect(
      bodies.filter(([key]) => key === "content_add.unknown.a").map(([, body]) => body.items.length),
    ).toEqual([2, 2, 1]);
    // Order holds per queue, not across queues: the first message of range a, whatever range b did.
    expect(bodies.find(([key]) => key === "content_add.unknown.a")?.[1]).toEqual({
      v: 1,
      items: [
        [a[0], "0"],
        [a[1], "1"],
      ],
    });
  });

  it("resolves true only once every message is confirmed, ignoring foreign, unknown and repeated replies; the timeout is one of inactivity", async () => {
    const { fake, client } = await clientOnFakeServer({
      itemsPerMessage: 1,
      waitMinMs: 1_500,
      waitPerBatchMs: 0,
    });
    let result: boolean | undefined;
    const call = client.contentAdd(new Map([idIn("c"), idIn("c"), idIn("c")].map((id) => [id, 1n])));
    void call.then((ok) => {
      result = ok;
    });
    await waitFor(() => fake.received.length === 3, 5_000, "three messages");
    const [m1, m2, m3] = fake.received as [ConsumeMessage, ConsumeMessage, ConsumeMessage];
    const id = (m: ConsumeMessage) => m.properties.messageId as string;
    fake.reply(m1, true, ["unknown-message"]);
    fake.reply(m1, true, [id(m2), id(m3)], "another-call");
    fake.reply(m1, true, [id(m1)]);
    fake.reply(m1, true, [id(m1)]);
    fake.reply(m1, true, [id(m1)]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(result).toBeUndefined();
    fake.reply(m2, true, [id(m2)]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(result).toBeUndefined();
    fake.reply(m3, true, [id(m3)]);
    // 2 s after publishing, past T = 1.5 s, but never 1.5 s without progress.
    expect(await call).toBe(true);
  });

  it("resolves false after T without progress, with a timeout event, and at once on an error reply", async () => {
    const { prefix, fake, storage, client } = await clientOnFakeServer({
      itemsPerMessage: 1,
      waitMinMs: 300,
      waitPerBatchMs: 200,
    });
    const timeouts: unknown[] = [];
    client.on("timed-out", (event) => timeouts.push(event));
    const started = Date.now();
    // Two messages: T = max(300, 2 × 200) = 400 ms.
    expect(
      await client.contentAdd(
        new Map([
          [idIn("d"), 1n],
          [idIn("d"), 2n],
        ]),
      ),
    ).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(timeouts).toEqual([{ method: "contentAdd", acknowledged: 0, expected: 2 }]);
    expect(client.lastFailure?.code).toBe("ERR_X_RMQ_STORAGE_TIMED_OUT");
    expect(client.lastFailure?.message).toBe("contentAdd: no progress for 400 ms: 0 of 2 messages committed");
    fake.received.length = 0;
    const slow = await RmqStorageClient.connect({ url: AMQP_URL, storage, prefix, waitMinMs: 60_000 });
    const call = slow.contentAdd(new Map([[idIn("e"), 1n]]));
    await waitFor(() => fake.received.length === 1, 5_000, "the message");
    const m = fake.received[0] as ConsumeMessage;
    fake.reply(m, false, [m.properties.messageId as string]);
    expect(await call).toBe(false);
    expect(slow.lastFailure?.code).toBe("ERR_X_RMQ_STORAGE_REJECTED");
    expect(slow.lastFailure?.message).toBe("contentAdd: the server rejected a message: refused");
    await slow.close();
  });

  it("close() resolves pending calls false at once; later calls reject with ERR_X_RMQ_STORAGE_CLOSED", async () => {
    const prefix = box.prefix();
    const fake = await fakeServer(prefix);
    const storage = await openSqliteStorage(":memory:");
    const client = await RmqStorageClient.connect({ url: AMQP_URL, storage, prefix });
    const call = client.contentAdd(new Map([[idIn("f"), 1n]]));
    await waitFor(() => fake.received.length === 1, 5_000, "the message");
    const started = Date.now();
    await client.close();
    expect(await call).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(client.lastFailure?.code).toBe("ERR_X_RMQ_STORAGE_CLOSED");
    expect(client.lastFailure?.message).toBe("contentAdd: the client was closed before the write completed");
    await client.close();
    await client[Symbol.asyncDispose]();
    expect(await code(client.contentAdd(new Map([[randomId(), 1n]])))).toBe("ERR_X_RMQ_STORAGE_CLOSED");
    expect(await code(client.contentGet([randomId()]))).toBe("ERR_X_RMQ_STORAGE_CLOSED");
    // The client never closes the storage it was given.
    expect(await storage.contentGet([randomId()])).toEqual(new Map());
    await storage.close();
    await fake.close();
  });

  it("waits in the durable queues when no server consumes them; a server started later writes them", async () => {
    const prefix = box.prefix();
    const file = box.file();
    const connection = await amqp.connect(AMQP_URL);
    await declareTopology(connection, topology(prefix));
    await connection.close();
    const local = await reader(file);
    const client = await RmqStorageClient.connect({
      url: AMQP_URL,
      storage: local,
      prefix,
      waitMinMs: 300,
      waitPerBatchMs: 0,
    });
    const ids = [idIn("1"), idIn("2")];
    expect(await client.contentAdd(new Map(ids.map((id) => [id, 9n])))).toBe(false);
    expect((await queueDepth(`${prefix}content_add.unknown.1`))?.ready).toBe(1);
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(file),
      prefix,
    });
    await waitFor(async () => (await local.contentGet(ids)).size === 2, 10_000, "the late write");
    await client.close();
    await local.close();
    await server.stop();
  });

  it("runs any number of concurrent calls, each resolving independently", async () => {
    const stack = await realStack();
    const calls = Array.from(
      { length: 40 },
      (_, i) =>
        new Map([
          [randomId(), BigInt(i)],
          [randomId(), BigInt(i)],
        ]),
    );
    expect(await Promise.all(calls.map((m) => stack.client.contentAdd(m)))).toEqual(calls.map(() => true));
    const all = new Map(calls.flatMap((m) => [...m]));
    expect((await stack.local.contentGet(all.keys())).size).toBe(80);
    await stack.close();
  });
});

describe("server", () => {
  it("by default: messages of 1 000 items, merged up to 10 000 items per write, a prefetch of 20", async () => {
    const stack = await realStack();
    const batches: Array<{ messages: number; items: number }> = [];
    stack.server.on("batch", (b) => batches.push(b));
    const ids = Array.from({ length: 25_000 }, () => idIn("9"));
    expect(await stack.client.contentAdd(new Map(ids.map((id, i) => [id, BigInt(i)])))).toBe(true);
    expect(batches.reduce((n, b) => n + b.messages, 0)).toBe(25);
    expect(batches.every((b) => b.items === b.messages * 1_000 && b.items <= 10_000)).toBe(true);
    expect(Math.max(...batches.map((b) => b.items))).toBeGreaterThan(1_000);
    const { stdout } = await promisify(execFile)("rabbitmqctl", [
      "list_consumers",
      "-q",
      "--no-table-headers",
      "queue_name",
      "prefetch_count",
    ]);
    expect(stdout).toContain(`${stack.prefix}content_add.unknown.9\t20\n`);
    // A lone small write goes out at once: nothing waits for more.
    batches.length = 0;
    const started = performance.now();
    expect(await stack.client.contentAdd(new Map([[idIn("a"), 1n]]))).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(batches).toEqual([expect.objectContaining({ messages: 1, items: 1 })]);
    await stack.close();
  });

  it("serves only its ranges, given as a list or as spans", async () => {
    for (const ranges of ["0-3,c", ["0", "1", "2", "3", "c"]]) {
      const prefix = box.prefix();
      const server = await RmqStorageServer.start({
        url: AMQP_URL,
        storage: () => openSqliteStorage(":memory:"),
        prefix,
        ranges,
      });
      const consumers = await Promise.all(
        [..."0123456789abcdef"].map(
          async (r) => (await queueDepth(`${prefix}content_add.unknown.${r}`))?.consumers,
        ),
      );
      const none = undefined; // a queue of another range is not even declared
      expect(consumers).toEqual([
        1,
        1,
        1,
        1,
        none,
        none,
        none,
        none,
        none,
        none,
        none,
        none,
        1,
        none,
        none,
        none,
      ]);
      await server.stop();
    }
  });

  it("a standby takes its queues after standbyWaitMs when no other server consumes them", async () => {
    const prefix = box.prefix();
    const started = performance.now();
    const standby = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
      ranges: "5",
      standbyWaitMs: 1_500,
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_500);
    expect((await queueDepth(`${prefix}content_add.unknown.5`))?.consumers).toBe(1);
    await standby.stop();
  });

  it("writes batches of whole messages of at most maxItemsPerWrite items; a larger message alone", async () => {
    const stack = await realStack({ maxItemsPerWrite: 250, itemsPerMessage: 100 });
    const batches: Array<{ messages: number; items: number }> = [];
    stack.server.on("batch", (b) => batches.push(b));
    const ids = Array.from({ length: 3_000 }, () => idIn("5"));
    expect(await stack.client.contentAdd(new Map(ids.map((id, i) => [id, BigInt(i)])))).toBe(true);
    expect(batches.reduce((n, b) => n + b.items, 0)).toBe(3_000);
    expect(batches.every((b) => b.items <= 250)).toBe(true);
    const big = await RmqStorageClient.connect({
      url: AMQP_URL,
      storage: stack.local,
      prefix: stack.prefix,
      itemsPerMessage: 600,
    });
    batches.length = 0;
    expect(await big.contentAdd(new Map(Array.from({ length: 600 }, () => [idIn("6"), 1n])))).toBe(true);
    expect(batches).toEqual([
      expect.objectContaining({ messages: 1, items: 600, durationMs: expect.any(Number) }),
    ]);
    await big.close();
    await stack.close();
  });

  it("keeps at most maxConcurrentWrites storage calls in flight; a queue waiting for one gathers a larger write", async () => {
    for (const slots of [1, 2]) {
      const file = box.file();
      let inFlight = 0;
      let most = 0;
      const slow = slowContentAdd(file, 250, (delta) => {
        inFlight += delta;
        most = Math.max(most, inFlight);
      });
      const stack = await realStack({
        file,
        storage: slow,
        maxConcurrentWrites: slots,
        itemsPerMessage: 100, // 5 messages per queue, within the default prefetch (20)
      });
      const batches: Array<{ queue: string; messages: number }> = [];
      stack.server.on("batch", (b) => batches.push(b));
      // Four queues, five messages each, all published before the first write ends.
      const ids = ["1", "2", "3", "4"].flatMap((range) => Array.from({ length: 500 }, () => idIn(range)));
      expect(await stack.client.contentAdd(new Map(ids.map((id) => [id, 1n])))).toBe(true);
      expect(most).toBe(slots);
      expect(batches.reduce((n, b) => n + b.messages, 0)).toBe(20);
      // The queues that waited for a slot wrote their five messages in one write.
      expect(batches.filter((b) => b.messages === 5).length).toBeGreaterThanOrEqual(4 - slots);
      expect((await stack.local.contentGet(ids)).size).toBe(2_000);
      await stack.close();
    }
  });

  it("requeues a batch after a storage failure, with backoff, until it is written", async () => {
    const file = box.file();
    let failures = 2;
    const stack = await realStack({
      file,
      storage: async () => {
        const inner = await openSqliteStorage(file);
        return new Proxy(inner, {
          get: (target, key) => {
            if (key === "contentAdd")
              return (m: Map<Sha1, bigint>) =>
                failures-- > 0 ? Promise.resolve(false) : target.contentAdd(m);
            const value = Reflect.get(target, key);
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
      },
    });
    const { client, local } = stack;
    const errors: number[] = [];
    stack.server.on("storage-error", ({ attempt }) => errors.push(attempt));
    const id = idIn("7");
    expect(await client.contentAdd(new Map([[id, 3n]]))).toBe(true);
    expect(errors).toEqual([1, 2]);
    expect(await local.contentGet([id])).toEqual(new Map([[id, 3n]]));
    await stack.close();
  });

  it("stops gracefully: finishes the batch in flight, returns the rest to the queue for the next server", async () => {
    const file = box.file();
    const slow = slowContentAdd(file, 200);
    const stack = await realStack({ file, storage: slow, maxItemsPerWrite: 100, itemsPerMessage: 100 });
    const batches: number[] = [];
    stack.server.on("batch", (b) => batches.push(b.items));
    const ids = Array.from({ length: 2_000 }, () => idIn("8"));
    let settled = false;
    const call = stack.client.contentAdd(new Map(ids.map((id) => [id, 1n]))).then((ok) => {
      settled = true;
      return ok;
    });
    await waitFor(() => batches.length >= 1, 10_000, "a first batch");
    await stack.server.stop();
    const written = batches.reduce((n, items) => n + items, 0);
    expect(written).toBeLessThan(2_000);
    expect((await stack.local.entityGetAll(EntityType.CONTENT)).size).toBe(written);
    const queue = await queueDepth(`${stack.prefix}content_add.unknown.8`);
    expect(queue?.consumers).toBe(0);
    expect((queue?.ready ?? 0) * 100).toBe(2_000 - written);
    expect(settled).toBe(false);
    const next = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(file),
      prefix: stack.prefix,
    });
    expect(await call).toBe(true);
    expect((await stack.local.contentGet(ids)).size).toBe(2_000);
    await stack.client.close();
    await stack.local.close();
    await next.stop();
  });

  it("spreads the ranges over child processes with processes > 1", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: `sqlite:${file}`,
      prefix,
      processes: 2,
    });
    const local = await reader(file);
    const client = await RmqStorageClient.connect({
      url: AMQP_URL,
      storage: local,
      prefix,
      waitMinMs: 30_000,
    });
    const fixture = generateFixture({ seed: 21 });
    for (const call of fixture.calls) expect(await apply(client, call)).toBe(true);
    expect((await queueDepth(`${prefix}content_add.unknown.0`))?.consumers).toBe(1);
    expect((await queueDepth(`${prefix}content_add.unknown.f`))?.consumers).toBe(1);
    await client.close();
    await local.close();
    await server.stop();
    expect((await queueDepth(`${prefix}content_add.unknown.f`))?.consumers).toBe(0);
    expect(await fileDump(file)).toEqual(await directDump(fixture.calls));
  }, 60_000);
});
